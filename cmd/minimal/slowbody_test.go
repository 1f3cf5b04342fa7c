package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"
)

// slowAnswer is what a gateway did with a request whose body trickles in.
type slowAnswer struct {
	status   int           // 0: no answer
	code     string        // the error envelope's code
	answered time.Duration // when the status line came
	closed   time.Duration // when the gateway closed (or reset) the connection (0: not seen)
	sent     int           // body bytes sent by then
}

// trickleBytes and trickleEvery make a body that takes 200 s to send.
const (
	trickleBytes = 1000
	trickleEvery = 200 * time.Millisecond
)

// slowPost sends, over a raw connection to addr, the head of a POST to path
// with headers and a Content-Length of trickleBytes, then one byte of the
// body every trickleEvery, until the gateway answers and closes the
// connection or limit passes.
func slowPost(t *testing.T, addr, path string, headers map[string]string, limit time.Duration) slowAnswer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, addr, trickleBytes)
	for k, v := range headers {
		head += k + ": " + v + "\r\n"
	}
	start := time.Now()
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	var a slowAnswer
	done := make(chan struct{}) // the reader is done: a is set
	go func() {
		defer close(done)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return
		}
		a.status, a.answered = resp.StatusCode, time.Since(start)
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.NewDecoder(resp.Body).Decode(&env) == nil {
			a.code = env.Error.Code
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		// The gateway closes with the rest of the body unread: the close
		// reads as EOF or as a reset, depending on whether a byte sent
		// after the answer was in its buffer. Either ends the connection;
		// the test's own deadline (limit) is not a close.
		_, err = br.ReadByte()
		if ne, ok := err.(net.Error); err != nil && !(ok && ne.Timeout()) {
			a.closed = time.Since(start)
		}
	}()
	stop := time.After(limit)
	tick := time.NewTicker(trickleEvery)
	defer tick.Stop()
	sent := 0
	for {
		select {
		case <-done:
			a.sent = sent
			return a
		case <-stop:
			_ = c.SetDeadline(time.Now()) // the reader gives up
			<-done
			a.sent = sent
			return a
		case <-tick.C:
			// Keep sending after an answer too: the gateway must close
			// the connection, not wait for the rest.
			if _, err := c.Write([]byte{'x'}); err == nil {
				sent++
			}
		}
	}
}

// TestSlowBodyRefusedAndCut attacks both listeners of serve and the HTTP
// drop-in mode with request bodies sent one byte every 200 ms (1000 bytes:
// 200 s). Without a valid credential the request is answered 401 at once,
// before any of the body is waited for, and the connection is closed; with
// one, the body timeout (2 s here) cuts it: 408, and the connection is
// closed. On every endpoint that reads a body: the Auto API, the tokens
// endpoint, a custom API, the admin API (server key), the MCP endpoint and
// the drop-in endpoint (its bearer).
func TestSlowBodyRefusedAndCut(t *testing.T) {
	const bodyTimeout = 3 * time.Second
	// atOnce bounds "at once" well under the body timeout, with room
	// for a loaded machine running the suite with -race.
	const atOnce = 1500 * time.Millisecond
	const serverKey = "a-server-key-of-the-operator"
	// Set in the environment, which the gateway before --body-timeout
	// ignored, so that this test runs (and fails) there too.
	t.Setenv("MINIMAL_BODY_TIMEOUT", bodyTimeout.String())
	t.Setenv("MINIMAL_SERVER_KEY", serverKey)
	dir := t.TempDir()
	s := startServe(t, dir)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	const bearer = "s3cret-bearer-token"
	p := startHTTPDropIn(t, "MINI_APP_HTTP_TOKEN="+bearer)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	const notes = "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"

	type probe struct {
		name    string
		addr    string
		path    string
		headers map[string]string
	}
	refused := []probe{
		{"auto API without token", s.addr, notes, nil},
		{"auto API with a forged token", s.addr, notes, map[string]string{"LB-Access-Token": "eyJhbGciOiJIUzI1NiJ9.e30.forged"}},
		{"tokens endpoint without token", s.addr, "/minimal/api/auth/v1/tokens", nil},
		{"custom API without token", s.addr, "/minimal/api/rest/custom/v1/demo/demo/anything", nil},
		{"admin API with a wrong server key", s.addr, "/minimal/api/admin/v1/orgs", map[string]string{"LB-Server-Key": "not-the-server-key-at-all"}},
		{"admin API without credentials", s.addr, "/minimal/api/admin/v1/orgs/demo/projects", nil},
		{"MCP endpoint without token", s.mcpAddr, "/minimal/mcp/rpc/v1", nil},
		{"MCP endpoint with a user's token", s.mcpAddr, "/minimal/mcp/rpc/v1", map[string]string{"LB-Access-Token": admin}},
		{"drop-in endpoint without bearer", u.Host, u.Path, nil},
	}
	admitted := []probe{
		{"auto API", s.addr, notes, map[string]string{"LB-Access-Token": admin}},
		{"admin API with the server key", s.addr, "/minimal/api/admin/v1/orgs", map[string]string{"LB-Server-Key": serverKey}},
		{"MCP endpoint", s.mcpAddr, "/minimal/mcp/rpc/v1", map[string]string{"LB-Access-Token": agent}},
		{"drop-in endpoint", u.Host, u.Path, map[string]string{"Authorization": "Bearer " + bearer}},
	}
	t.Run("refused at once", func(t *testing.T) {
		for _, pr := range refused {
			t.Run(pr.name, func(t *testing.T) {
				t.Parallel()
				a := slowPost(t, pr.addr, pr.path, pr.headers, bodyTimeout+3*time.Second)
				want := http.StatusUnauthorized
				if pr.name == "MCP endpoint with a user's token" {
					want = http.StatusForbidden
				}
				switch {
				case a.status != want:
					t.Fatalf("status %d after %v (%d body bytes sent), want %d at once", a.status, a.answered, a.sent, want)
				case a.answered > atOnce:
					t.Errorf("answered after %v (%d body bytes sent), want at once: the body must not be waited for", a.answered, a.sent)
				}
				if a.closed == 0 || a.closed > atOnce {
					t.Errorf("connection closed after %v (0: not within %v), want at once after the answer", a.closed, bodyTimeout+3*time.Second)
				}
			})
		}
	})
	t.Run("cut at the body timeout", func(t *testing.T) {
		for _, pr := range admitted {
			t.Run(pr.name, func(t *testing.T) {
				t.Parallel()
				a := slowPost(t, pr.addr, pr.path, pr.headers, bodyTimeout+5*time.Second)
				switch {
				case a.status != http.StatusRequestTimeout || a.code != "REQUEST_TIMEOUT":
					t.Fatalf("status %d %q after %v (%d body bytes sent), want 408 REQUEST_TIMEOUT after %v", a.status, a.code, a.answered, a.sent, bodyTimeout)
				case a.answered < bodyTimeout-100*time.Millisecond || a.answered > bodyTimeout+2*time.Second:
					t.Errorf("answered 408 after %v, want at the body timeout (%v)", a.answered, bodyTimeout)
				}
				if a.closed == 0 || a.closed > a.answered+atOnce {
					t.Errorf("connection closed after %v (0: not seen), want right after the 408 (%v)", a.closed, a.answered)
				}
			})
		}
	})
	t.Run("flag", func(t *testing.T) {
		// An address that cannot be listened on ends a serve that took
		// the value (exit 1); a refused value is a usage error (exit 2).
		for _, v := range []string{"0s", "-1s"} {
			if _, errOut, code := cli(t, "serve", "--data-dir", t.TempDir(), "--rest-addr", "256.0.0.1:1", "--body-timeout", v); code != 2 {
				t.Errorf("serve --body-timeout %s: exit %d, want 2: %s", v, code, errOut)
			}
		}
		t.Setenv(envBodyTimeout, "soon")
		if _, errOut, code := cli(t, "serve", "--data-dir", t.TempDir(), "--rest-addr", "256.0.0.1:1"); code != 2 {
			t.Errorf("serve with %s=soon: exit %d, want 2: %s", envBodyTimeout, code, errOut)
		}
	})
}
