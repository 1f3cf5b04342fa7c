package console_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	"github.com/littlebitlabs/minimal/console"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// gateway is the console's handler over a bootstrapped store.
func gateway(t *testing.T) (*httptest.Server, *store.Store, []byte) {
	t.Helper()
	srv, st, key, _ := gatewayIn(t)
	return srv, st, key
}

// gatewayIn is gateway, with the data dir of its store.
func gatewayIn(t *testing.T) (*httptest.Server, *store.Store, []byte, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bootstrap.Ensure(ctx, st, dir, key, auth.NewVerifier(st, key), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(console.Handler(st, key))
	t.Cleanup(srv.Close)
	return srv, st, key, dir
}

// TestExchangeGuessTakesNoWriteLock: an anonymous guess at a sign-in code
// is refused without the store's write lock, which the gateway's audit and
// journal writers wait for: while another connection holds that lock, a
// guess is answered 401 at once instead of queueing behind it (up to the
// busy timeout) — a flood of guesses cannot stall the audit log. A real
// code is still taken.
func TestExchangeGuessTakesNoWriteLock(t *testing.T) {
	srv, st, _, dir := gatewayIn(t)
	ctx := context.Background()
	admin := demoAdmin(t, st)
	code, _, err := console.NewCode(ctx, st, store.ConsoleCode{IdentityID: admin.ID, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer unlock()
	for range 3 {
		t0 := time.Now()
		status, body := exchange(t, srv, `{"code":"guess`+strings.Repeat("x", 40)+`"}`)
		if took := time.Since(t0); status != 401 || !strings.Contains(body, "UNAUTHENTICATED") || took > 2*time.Second {
			t.Fatalf("guess while the write lock is held: %d in %v: %s", status, took, body)
		}
	}
	unlock()
	if status, body := exchange(t, srv, `{"code":"`+code+`"}`); status != 200 {
		t.Fatalf("real code: %d %s", status, body)
	}
}

// TestEveryFileServedWithHeaders serves each embedded file with the
// security headers, and a missing one as a 404 with them too.
func TestEveryFileServedWithHeaders(t *testing.T) {
	srv, _, _ := gateway(t)
	paths := []string{console.Prefix, console.Prefix + "nosuch.js"}
	for _, f := range []string{"index.html", "app.js", "app.css"} {
		paths = append(paths, console.Prefix+f)
	}
	for _, p := range paths {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := 200
		if strings.Contains(p, "nosuch") {
			want = 404
		}
		h := resp.Header
		// (net/http drops Cache-Control from the error answers of a file server.)
		if resp.StatusCode != want || h.Get("Content-Security-Policy") != console.CSP || h.Get("X-Content-Type-Options") != "nosniff" || want == 200 && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, h)
		}
	}
	if strings.Contains(console.CSP, "unsafe") || !strings.Contains(console.CSP, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", console.CSP)
	}
}

// TestExchange mints a token of the identity once per code, within
// what the identity holds.
func TestExchange(t *testing.T) {
	srv, st, key := gateway(t)
	ctx := context.Background()
	admin := demoAdmin(t, st)
	post := func(body string) (int, string) { return exchange(t, srv, body) }

	code, expires, err := console.NewCode(ctx, st, store.ConsoleCode{IdentityID: admin.ID, KeyType: "-r--", TTL: 10 * time.Minute})
	if err != nil || time.Until(expires) > console.CodeTTL || len(code) < 40 {
		t.Fatalf("NewCode: %q %v %v", code, expires, err)
	}
	status, body := post(`{"code":"` + code + `"}`)
	if status != 200 || !strings.Contains(body, `"key_type":"-r--"`) || !strings.Contains(body, `"identity":"admin"`) {
		t.Fatalf("exchange: %d %s", status, body)
	}
	tok := body[strings.Index(body, `"token":"`)+9:]
	tok = tok[:strings.Index(tok, `"`)]
	p, err := auth.NewVerifier(st, key).Verify(ctx, tok)
	if err != nil || p.Identity != "admin" || p.KeyType.String() != "-r--" || time.Until(p.ExpiresAt) > 10*time.Minute {
		t.Fatalf("token: %+v %v", p, err)
	}
	if status, body := post(`{"code":"` + code + `"}`); status != 401 || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Fatalf("reused: %d %s", status, body)
	}
	for _, bad := range []string{``, `{}`, `{"code":""}`, `not json`, `{"code":"x","more":1}`} {
		if status, _ := post(bad); status != 400 {
			t.Errorf("body %q: %d", bad, status)
		}
	}
	if _, _, err := console.NewCode(ctx, st, store.ConsoleCode{IdentityID: admin.ID, TTL: console.MaxTokenTTL + time.Minute}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("TTL over the cap: %v", err)
	}
	// Roles the identity does not hold are refused when the code is taken.
	wide, _, err := console.NewCode(ctx, st, store.ConsoleCode{IdentityID: admin.ID, Roles: []string{"admin", "root"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := post(`{"code":"` + wide + `"}`); status != 403 || !strings.Contains(body, "root") {
		t.Fatalf("wider roles: %d %s", status, body)
	}
}

// exchange POSTs body to the code exchange and answers its status and body.
func exchange(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(srv.URL+console.ExchangePath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// demoAdmin is the bootstrapped admin identity of the demo project.
func demoAdmin(t *testing.T, st *store.Store) store.Identity {
	t.Helper()
	ctx := context.Background()
	proj, err := st.ProjectByAbbr(ctx, mustOrg(t, st).ID, "demo")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := st.Identity(ctx, proj.ID, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

func mustOrg(t *testing.T, st *store.Store) store.Org {
	t.Helper()
	o, err := st.Org(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	return o
}
