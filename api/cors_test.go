package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
)

// corsServer serves the gateway's engine and store again, with CORS on for
// origins.
func corsServer(t *testing.T, g *gateway, origins ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(api.New(api.Deps{Engine: g.eng, Verifier: auth.NewVerifier(g.st, g.key), Store: g.st, SigningKey: g.key},
		api.Config{MaxPageSize: 100, CORSOrigins: origins, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	return srv
}

// call sends one request with the given headers and answers the status,
// headers and body.
func call(t *testing.T, srv *httptest.Server, method, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// corsHeaders are the Access-Control-* headers of an answer.
func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	return out
}

// TestCORS: off by default; with origins, a preflight from an allowed
// origin is answered before any token is asked for, with the exact origin
// echoed and the token headers allowed, never credentials; another origin
// gets no CORS header at all.
func TestCORS(t *testing.T) {
	g := newGateway(t, engine.Config{})
	const app = "https://app.example.com"
	notes := auto + "/mi/app/notes"
	preflight := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "lb-access-token, content-type"}
	}

	// Default: off. A preflight is an OPTIONS like any other.
	status, h, _ := call(t, g.srv, "OPTIONS", notes, preflight(app))
	if status == http.StatusNoContent || len(corsHeaders(h)) > 0 {
		t.Fatalf("CORS off: %d %v", status, h)
	}
	if _, h, _ := call(t, g.srv, "GET", notes+"?ps=1&pg=0", map[string]string{"Origin": app, "LB-Access-Token": g.admin}); len(corsHeaders(h)) > 0 {
		t.Fatalf("CORS off, GET: %v", h)
	}

	srv := corsServer(t, g, app, "http://localhost:5173")
	// Allowed origin: 204 without a token.
	status, h, body := call(t, srv, "OPTIONS", notes, preflight(app))
	if status != http.StatusNoContent || body != "" {
		t.Fatalf("preflight: %d %s", status, body)
	}
	if h.Get("Access-Control-Allow-Origin") != app || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight origin/credentials: %v", h)
	}
	allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
	for _, want := range []string{"lb-access-token", "authorization", "content-type"} {
		if !strings.Contains(allowed, want) {
			t.Errorf("allowed headers %q lack %s", allowed, want)
		}
	}
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) {
			t.Errorf("allowed methods %q lack %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") || h.Get("Access-Control-Max-Age") == "" {
		t.Errorf("preflight Vary/Max-Age: %v", h)
	}
	// The second allowed origin is echoed too, the preflight needs no path
	// that exists.
	if _, h, _ := call(t, srv, "OPTIONS", auto+"/pg/nosuch/t", preflight("http://localhost:5173")); h.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Errorf("second origin: %v", h)
	}

	// The call itself: the origin echoed, answers readable; a refusal too.
	status, h, _ = call(t, srv, "GET", notes+"?ps=1&pg=0", map[string]string{"Origin": app, "LB-Access-Token": g.admin})
	if status != 200 || h.Get("Access-Control-Allow-Origin") != app || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("GET from the app: %d %v", status, h)
	}
	if status, h, _ := call(t, srv, "GET", notes+"?ps=1&pg=0", map[string]string{"Origin": app}); status != 401 || h.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("GET without a token: %d %v", status, h)
	}
	// The caller's OpenAPI document varies by origin and by token.
	status, h, _ = call(t, srv, "GET", auto+"/openapi.json", map[string]string{"Origin": app, "LB-Access-Token": g.admin})
	if vary := strings.Join(h.Values("Vary"), ","); status != 200 || !strings.Contains(vary, "Origin") || !strings.Contains(vary, "LB-Access-Token") {
		t.Errorf("caller OpenAPI from the app: %d Vary %q", status, vary)
	}

	// Another origin: no CORS header, the preflight is not answered as one.
	for _, evil := range []string{"https://evil.example.com", "https://app.example.com.evil.io", "null"} {
		status, h, _ := call(t, srv, "OPTIONS", notes, preflight(evil))
		if status == http.StatusNoContent || len(corsHeaders(h)) > 0 {
			t.Errorf("preflight from %s: %d %v", evil, status, h)
		}
		if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Errorf("answer to %s lacks Vary: Origin: %v", evil, h)
		}
		if _, h, _ := call(t, srv, "GET", notes+"?ps=1&pg=0", map[string]string{"Origin": evil, "LB-Access-Token": g.admin}); len(corsHeaders(h)) > 0 {
			t.Errorf("GET from %s: %v", evil, h)
		}
	}

	// "*" alone: every origin, a literal *, still no credentials.
	any := corsServer(t, g, "*")
	if _, h, _ := call(t, any, "OPTIONS", notes, preflight("https://elsewhere.example")); h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("* preflight: %v", h)
	}
}

// TestParseCORSOrigins: origins as a browser sends them, or * alone.
func TestParseCORSOrigins(t *testing.T) {
	got, err := api.ParseCORSOrigins(" https://App.example.com, http://localhost:5173/ ,")
	if err != nil || fmtList(got) != "[https://app.example.com http://localhost:5173]" {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := api.ParseCORSOrigins(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"app.example.com", "ftp://x.example", "https://x.example/app", "https://u@x.example", "https://x.example?q=1", "*,https://x.example"} {
		if _, err := api.ParseCORSOrigins(bad); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
