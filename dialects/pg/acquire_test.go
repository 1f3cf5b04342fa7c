package pg_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestAcquireAndCallDeadlines: with an acquire timeout, one timer bounds
// both the wait for a connection and the call (Source.acquireBound); each
// bound still ends what it ended with a context of its own:
//
//   - a pool whose every connection is busy answers fault.Timeout (pool
//     exhausted) at the acquire timeout;
//   - a pool with room whose database does not answer a new connection
//     answers fault.Unavailable at the acquire timeout;
//   - a call whose deadline (statement timeout and its grace) comes before
//     the acquire timeout ends there while waiting, as timed out;
//   - a connection had at once, then lost without a reset, ends at the
//     call's deadline, as timed out (the timer was set again after the
//     acquisition).
func TestAcquireAndCallDeadlines(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, `CREATE TABLE t (id int PRIMARY KEY)`)
	db.exec(t, `INSERT INTO t VALUES (1), (2)`)
	read := &query.Plan{Action: query.Read, Schema: db.schema, Table: "t", Columns: []string{"id"}}
	ctx := context.Background()
	// hold takes src's only connection until the returned func runs.
	hold := func(t *testing.T, src dialects.Source) func() {
		// The first connection is made under the acquire timeout too,
		// which a busy machine may miss.
		for try := 0; src.Ping(ctx) != nil && try < 20; try++ {
		}
		rows, err := src.Read(ctx, read)
		if err != nil {
			t.Fatal(err)
		}
		return func() { _ = rows.Close() }
	}
	timed := func(f func() error) (error, time.Duration) {
		start := time.Now()
		err := f()
		return err, time.Since(start)
	}
	wantErr := func(t *testing.T, err error, kind fault.Kind, msg string, took, least, most time.Duration) {
		t.Helper()
		wantKind(t, err, kind)
		if m := fault.As(err).Message; !strings.Contains(m, msg) {
			t.Errorf("message %q, want it to say %q", m, msg)
		}
		if took < least || took > most {
			t.Errorf("answered after %v, want between %v and %v", took, least, most)
		}
	}

	t.Run("exhausted", func(t *testing.T) {
		src := db.open(t, dialects.Config{MaxConns: 1, AcquireTimeout: 200 * time.Millisecond, StatementTimeout: 30 * time.Second})
		release := hold(t, src)
		err, took := timed(func() error { return readAll(src, read) })
		wantErr(t, err, fault.Timeout, "connection pool exhausted", took, 180*time.Millisecond, 900*time.Millisecond)
		release()
		if err := readAll(src, read); err != nil {
			t.Fatalf("after release: %v", err)
		}
	})

	t.Run("no answer", func(t *testing.T) {
		// A frozen proxy accepts connections and passes nothing.
		p := dialecttest.StartProxy(t, serverAddr(t, db.dsn))
		p.Freeze()
		src := db.open(t, dialects.Config{DSN: "postgres://nobody@" + p.Addr() + "/none?sslmode=disable&connect_timeout=30",
			AcquireTimeout: 200 * time.Millisecond, StatementTimeout: 30 * time.Second})
		err, took := timed(func() error { return readAll(src, read) })
		wantErr(t, err, fault.Unavailable, "no connection within 200ms", took, 180*time.Millisecond, 900*time.Millisecond)
		err, took = timed(func() error { return src.Ping(ctx) })
		wantErr(t, err, fault.Unavailable, "no connection within 200ms", took, 180*time.Millisecond, 900*time.Millisecond)
	})

	t.Run("call deadline first", func(t *testing.T) {
		// 100ms + the 1s grace end the call before the 5s acquire timeout.
		src := db.open(t, dialects.Config{MaxConns: 1, AcquireTimeout: 5 * time.Second, StatementTimeout: 100 * time.Millisecond})
		release := hold(t, src)
		defer release()
		err, took := timed(func() error { return readAll(src, read) })
		wantErr(t, err, fault.Timeout, "database operation timed out", took, time.Second, 2500*time.Millisecond)
	})

	t.Run("connection lost", func(t *testing.T) {
		p := dialecttest.StartProxy(t, serverAddr(t, db.dsn))
		src := db.open(t, dialects.Config{DSN: viaProxy(t, db.dsn, p.Addr()), MaxConns: 1, AcquireTimeout: 5 * time.Second, StatementTimeout: 100 * time.Millisecond})
		if err := readAll(src, read); err != nil {
			t.Fatal(err)
		}
		p.Freeze()
		// The caller's own deadline would end it at 4s.
		cctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		defer cancel()
		err, took := timed(func() error {
			rows, err := src.Read(cctx, read)
			if err == nil {
				err = rows.Close()
			}
			return err
		})
		wantErr(t, err, fault.Timeout, "database operation timed out", took, time.Second, 2500*time.Millisecond)
		// Closed now, src does not wait on the frozen connection.
		p.Cut()
		_ = src.Close()
	})
}

// serverAddr is the host:port of a URL DSN; the test is skipped for a
// keyword/value DSN.
func serverAddr(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test DSN is not a URL with a host: %v", err)
	}
	return u.Host
}

// viaProxy is dsn with its host:port replaced by addr.
func viaProxy(t *testing.T, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}
