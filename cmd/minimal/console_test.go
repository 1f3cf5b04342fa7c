package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/console"
	"github.com/littlebitlabs/minimal/store"
)

// consoleLink runs console-link against dataDir for a server at addr and
// returns the URL it printed and the one-time code in its fragment.
func consoleLink(t *testing.T, dataDir, addr string, args ...string) (string, string) {
	t.Helper()
	out, errOut, code := cli(t, append([]string{"console-link", "--data-dir", dataDir, "--url", "http://" + addr}, args...)...)
	if code != 0 {
		t.Fatalf("console-link %v: exit %d: %s", args, code, errOut)
	}
	link := strings.TrimSpace(out)
	base, c, ok := strings.Cut(link, "#code=")
	if !ok || base != "http://"+addr+console.Prefix || c == "" || strings.ContainsAny(base, "?&") {
		t.Fatalf("console-link printed %q: want the console URL with the code in its fragment only", link)
	}
	return link, c
}

// exchange posts a code to a server's exchange endpoint.
func exchange(t *testing.T, addr, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post("http://"+addr+console.ExchangePath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("exchange answered %d, not JSON: %s", resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

func codeBody(code string) string {
	b, _ := json.Marshal(map[string]string{"code": code})
	return string(b)
}

// errCode is the code of an error envelope.
func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// TestConsoleLinkCodes attacks the one-time codes over HTTP: a code works
// once, within its lifetime, on the control plane that minted it, for what
// the identity holds; reused, expired, guessed or foreign codes, and codes
// sent anywhere but a POST body, are refused.
func TestConsoleLinkCodes(t *testing.T) {
	dir, otherDir := t.TempDir(), t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	other := startServer(t, otherDir)
	defer other.stop(t)

	before := time.Now()
	_, code := consoleLink(t, dir, s.addr, "--identity", "admin", "--ttl", "30m")
	// Stored hashed, never in the clear, expiring within 5 minutes.
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(code))
	raw, ok, err := st.Setting(ctx, "console_code:"+hex.EncodeToString(sum[:]))
	if err != nil || !ok || strings.Contains(raw, code) {
		t.Fatalf("stored code: %q %v %v", raw, ok, err)
	}
	var stored store.ConsoleCode
	if err := json.Unmarshal([]byte(raw), &stored); err != nil || stored.ExpiresAt.After(time.Now().Add(console.CodeTTL)) || stored.ExpiresAt.Before(before) {
		t.Fatalf("stored code expires at %v (%v)", stored.ExpiresAt, err)
	}

	status, got := exchange(t, s.addr, codeBody(code))
	if status != 200 || got["identity"] != "admin" || got["org"] != "demo" || got["project"] != "demo" {
		t.Fatalf("exchange: %d %v", status, got)
	}
	tok := got["token"].(string)
	exp, _ := time.Parse(time.RFC3339, got["expires_at"].(string))
	if exp.After(time.Now().Add(30*time.Minute+5*time.Second)) || exp.Before(before.Add(29*time.Minute)) {
		t.Fatalf("token expires at %v, want in 30 minutes", exp)
	}
	if code, _, body := get(t, "http://"+s.addr+"/minimal/api/admin/v1/orgs/demo/projects/demo/databases", tok); code != 200 {
		t.Fatalf("the console's token on the admin API: %d %s", code, body)
	}

	refused := func(what, addr, body string, status int, wantCode string) {
		t.Helper()
		got, m := exchange(t, addr, body)
		if got != status || errCode(m) != wantCode {
			t.Errorf("%s: %d %v, want %d %s", what, got, m, status, wantCode)
		}
		if _, ok := m["token"]; ok {
			t.Errorf("%s: answered a token", what)
		}
	}
	refused("reused code", s.addr, codeBody(code), 401, "UNAUTHENTICATED")

	guess := make([]byte, 32)
	_, _ = rand.Read(guess)
	refused("guessed code", s.addr, codeBody(base64.RawURLEncoding.EncodeToString(guess)), 401, "UNAUTHENTICATED")

	// A code of another control plane: refused here, good there.
	_, foreign := consoleLink(t, otherDir, other.addr, "--identity", "admin")
	refused("code from another server", s.addr, codeBody(foreign), 401, "UNAUTHENTICATED")
	if status, _ := exchange(t, other.addr, codeBody(foreign)); status != 200 {
		t.Fatalf("the foreign code on its own server: %d", status)
	}

	// An expired code (stored as console-link stores it, but past its time).
	expired := "expired-" + base64.RawURLEncoding.EncodeToString(guess)
	esum := sha256.Sum256([]byte(expired))
	if err := st.PutConsoleCode(ctx, hex.EncodeToString(esum[:]), store.ConsoleCode{IdentityID: stored.IdentityID, TTL: time.Hour, ExpiresAt: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	refused("expired code", s.addr, codeBody(expired), 401, "UNAUTHENTICATED")

	// Only a POST with the code in its body.
	_, code2 := consoleLink(t, dir, s.addr, "--identity", "admin")
	resp, err := http.Get("http://" + s.addr + console.ExchangePath + "?code=" + code2)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET exchange with the code in the query: %d, want 405", resp.StatusCode)
	}
	resp, err = http.Post("http://"+s.addr+console.ExchangePath+"?code="+code2, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("POST exchange with the code in the query: %d, want 400", resp.StatusCode)
	}
	refused("unknown field", s.addr, `{"code":"`+code2+`","roles":["admin"]}`, 400, "INVALID")
	resp, err = http.Post("http://"+s.addr+console.ExchangePath, "text/plain", strings.NewReader(codeBody(code2)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a form-like text/plain exchange: %d, want 400", resp.StatusCode)
	}
	if status, _ := exchange(t, s.addr, codeBody(code2)); status != 200 {
		t.Fatalf("code2 after the refused attempts: %d", status)
	}

	// The token is never more than the identity holds (auth.Mint's rules,
	// checked when the code is exchanged).
	_, wide := consoleLink(t, dir, s.addr, "--identity", "agent", "--roles", "admin,superuser")
	refused("a role the identity lacks", s.addr, codeBody(wide), 403, "FORBIDDEN")
	if _, errOut, code := cli(t, "console-link", "--data-dir", dir, "--identity", "nobody"); code != 1 || !strings.Contains(errOut, "nobody") {
		t.Errorf("unknown identity: exit %d %s", code, errOut)
	}
	for _, args := range [][]string{{"--identity", "admin", "--ttl", "13h"}, {"--identity", "admin", "--ttl", "-1m"}, {}, {"--identity", "admin", "--url", "javascript:alert(1)"}, {"--identity", "admin", "--key-type", "rwx"}} {
		if _, _, code := cli(t, append([]string{"console-link", "--data-dir", dir}, args...)...); code != 2 {
			t.Errorf("console-link %v: exit %d, want 2", args, code)
		}
	}
}

// TestConsoleHeaders checks what the console's files are served with, and
// that --console=false takes them away.
func TestConsoleHeaders(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	for path, ctype := range map[string]string{console.Prefix: "text/html", console.Prefix + "app.js": "text/javascript", console.Prefix + "app.css": "text/css"} {
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		if resp.StatusCode != 200 || !strings.HasPrefix(h.Get("Content-Type"), ctype) || len(body) == 0 {
			t.Errorf("%s: %d %s", path, resp.StatusCode, h.Get("Content-Type"))
		}
		if csp == "" || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, h)
		}
		// No inline script or style, no third-party URL.
		for _, bad := range []string{"<script>", "style=", "<style", "http://", "https://", "//cdn"} {
			if strings.Contains(string(body), bad) {
				t.Errorf("%s holds %q", path, bad)
			}
		}
	}
	if code, _, _ := get(t, "http://"+s.addr+"/minimal/console", ""); code != 200 {
		t.Errorf("/minimal/console: %d (redirect to the console expected)", code)
	}
	s.stop(t)

	off := startServer(t, dir, "--console=false")
	defer off.stop(t)
	if code, _, body := get(t, "http://"+off.addr+console.Prefix, ""); code != 404 || !strings.Contains(body, "NOT_FOUND") {
		t.Errorf("--console=false: %d %s", code, body)
	}
	if status, _ := exchange(t, off.addr, codeBody("x")); status != 404 {
		t.Errorf("--console=false: exchange answered %d", status)
	}
	if code, _, _ := get(t, "http://"+off.addr+"/livez", ""); code != 200 {
		t.Errorf("--console=false: livez %d", code)
	}
}
