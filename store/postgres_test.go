package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/fault"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b = ?`, `SELECT * FROM t WHERE a = $1 AND b = $2`},
		{`INSERT INTO t (a, b, c) VALUES (?, ?, ?)`, `INSERT INTO t (a, b, c) VALUES ($1, $2, $3)`},
		{`SELECT '?' FROM t WHERE a = ?`, `SELECT '?' FROM t WHERE a = $1`},
		{`SELECT 'it''s ?' , ? FROM t`, `SELECT 'it''s ?' , $1 FROM t`},
		{`SELECT "odd?col" FROM t WHERE a = ?`, `SELECT "odd?col" FROM t WHERE a = $1`},
		{"SELECT a -- why?\nFROM t WHERE a = ?", "SELECT a -- why?\nFROM t WHERE a = $1"},
		{`SELECT /* ? */ a FROM t WHERE a = ?`, `SELECT /* ? */ a FROM t WHERE a = $1`},
		{`SELECT $$ ? $$, ?`, `SELECT $$ ? $$, $1`},
		{`SELECT $tag$ ? $tag$, ?`, `SELECT $tag$ ? $tag$, $1`},
		{`SELECT a$b, ?`, `SELECT a$b, $1`},
		{`SELECT '?`, `SELECT '?`},
		{`SELECT /* ?`, `SELECT /* ?`},
		{`?,?,?,?,?,?,?,?,?,?,?`, `$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11`},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRebind(f *testing.F) {
	for _, seed := range []string{"SELECT ? FROM t", "'?'", `"?"`, "-- ?\n?", "/* ? */ ?", "$$?$$?", "$a$?$a$", "$1 ?", "'", "$"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := rebind(q)
		if !strings.Contains(q, "?") && got != q {
			t.Fatalf("rebind(%q) = %q changed a query without '?'", q, got)
		}
		if strings.Count(got, "?") > strings.Count(q, "?") {
			t.Fatalf("rebind(%q) = %q added a '?'", q, got)
		}
		// Every placeholder rewritten is counted from $1 with no gap.
		n := strings.Count(q, "?") - strings.Count(got, "?")
		if n > 0 && !strings.Contains(got, fmt.Sprintf("$%d", n)) {
			t.Fatalf("rebind(%q) = %q: %d placeholders but no $%d", q, got, n, n)
		}
	})
}

func TestBackendFollowsEnv(t *testing.T) { eachBackend(t, testBackendFollowsEnv) }

func testBackendFollowsEnv(t *testing.T) {
	s, _ := newStore(t)
	want := "SQLite"
	if onPostgres() {
		want = "PostgreSQL"
	}
	if got := s.Backend(); got != want {
		t.Fatalf("Backend() = %q, want %q", got, want)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A uniqueness violation raised by the database itself (not by a check in
// Go) is Conflict on both backends.
func TestUniqueViolationIsConflict(t *testing.T) { eachBackend(t, testUniqueViolationIsConflict) }

func testUniqueViolationIsConflict(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for i := range 2 {
		_, err := s.db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)`, "dup", "v")
		if i == 0 {
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		wantKind(t, dbErr(err, "store: insert"), fault.Conflict)
	}
}

func TestOpenControlErrors(t *testing.T) {
	t.Setenv(EnvMasterKey, "")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := OpenControl(ctx, t.TempDir(), "postgres://u:s3cr3t-pw@[::1")
	wantKind(t, err, fault.Invalid)
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("error repeats the password: %v", err)
	}
	_, err = OpenControl(ctx, t.TempDir(), "postgres://u:s3cr3t-pw@127.0.0.1:1/x?connect_timeout=2")
	wantKind(t, err, fault.Unavailable)
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("error repeats the password: %v", err)
	}
}

// Replicas starting together on an empty control plane each create a
// signing key; exactly one is kept and every one of them reads it back.
func TestPutSettingIfAbsent(t *testing.T) { eachBackend(t, testPutSettingIfAbsent) }

func testPutSettingIfAbsent(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	if wrote, err := s.PutSettingIfAbsent(ctx, "a", "1"); err != nil || !wrote {
		t.Fatalf("first PutSettingIfAbsent = %v, %v", wrote, err)
	}
	if wrote, err := s.PutSettingIfAbsent(ctx, "a", "2"); err != nil || wrote {
		t.Fatalf("second PutSettingIfAbsent = %v, %v", wrote, err)
	}
	if v, _, _ := s.Setting(ctx, "a"); v != "1" {
		t.Fatalf("Setting = %q, want the first value", v)
	}
	_, err := s.PutSettingIfAbsent(ctx, "", "x")
	wantKind(t, err, fault.Invalid)

	const n = 8
	stores := []*Store{s}
	for range n - 1 {
		stores = append(stores, openStore(t, dir))
	}
	wrote := make([]bool, n)
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			if wrote[i], errs[i] = st.PutSealedSettingIfAbsent(ctx, "key", fmt.Sprintf("key-%d", i)); errs[i] == nil {
				got[i], _, errs[i] = st.SealedSetting(ctx, "key")
			}
		})
	}
	wg.Wait()
	writers := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("store %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Fatalf("store %d reads %q, store 0 %q", i, got[i], got[0])
		}
		if wrote[i] {
			writers++
			if got[i] != fmt.Sprintf("key-%d", i) {
				t.Fatalf("store %d wrote but reads %q", i, got[i])
			}
		}
	}
	if writers != 1 {
		t.Fatalf("%d stores wrote the key, want 1", writers)
	}
}

// Changes wakes a reader soon after a write: on PostgreSQL a write through
// another handle (LISTEN/NOTIFY), on SQLite a write through the same one.
func TestChanges(t *testing.T) { eachBackend(t, testChanges) }

func testChanges(t *testing.T) {
	a, dir := newStore(t)
	b := openStore(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	wake := a.Changes(ctx)
	writer := a
	if onPostgres() {
		writer = b
		// The first value says the listener is in place.
		receive(t, wake, "LISTEN established")
	}
	for i := range 3 {
		if err := writer.PutSetting(ctx, "k", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		receive(t, wake, fmt.Sprintf("write %d", i))
	}
	// Session records are not configuration: no wake-up.
	if onPostgres() {
		p, id := sessionOwner(t, writer, "s")
		receive(t, wake, "setup")
		drain(wake)
		if _, err := writer.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wake:
			t.Fatal("a session write woke the reader")
		case <-time.After(300 * time.Millisecond):
		}
	}
	cancel()
	waitClosed(t, wake, "after its context ended")
	// Close ends the channels of a Store too.
	wake = b.Changes(t.Context())
	b.Close()
	waitClosed(t, wake, "by Close")
}

func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no wake-up within 5 s", what)
	}
}

// waitClosed drains ch until it is closed, failing after 5 s.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("Changes channel not closed %s", what)
		}
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

func TestDBErrPostgres(t *testing.T) {
	tests := []struct {
		err  error
		want fault.Kind
	}{
		{&pgconn.PgError{Code: "23505"}, fault.Conflict},
		{&pgconn.PgError{Code: "40001"}, fault.Unavailable},
		{&pgconn.PgError{Code: "40P01"}, fault.Unavailable},
		{&pgconn.PgError{Code: "57P01"}, fault.Unavailable},
		{&pgconn.PgError{Code: "08006"}, fault.Unavailable},
		{&pgconn.PgError{Code: "42P01"}, fault.Internal},
		{fmt.Errorf("query: %w", driver.ErrBadConn), fault.Unavailable},
		{&net.OpError{Op: "read", Err: errors.New("connection reset")}, fault.Unavailable},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), fault.Unavailable},
		{fmt.Errorf("q: %w", context.DeadlineExceeded), fault.Timeout},
		{errors.New("other"), fault.Internal},
	}
	for _, tt := range tests {
		if got := fault.KindOf(dbErr(tt.err, "store: op")); got != tt.want {
			t.Errorf("dbErr(%v) kind = %v, want %v", tt.err, got, tt.want)
		}
	}
}
