package observe

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

// capture keeps the records it is handed.
type capture struct{ recs []slog.Record }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

// TestRequestLineBytes: the request line Middleware builds (its attributes
// now in the request's own storage) is written the same by slog's handler
// and ours, and reads as it always has.
func TestRequestLineBytes(t *testing.T) {
	c := &capture{}
	r := chi.NewRouter()
	r.Use(Middleware(FaceREST, NewMetrics("test"), slog.New(c)))
	sub := chi.NewRouter()
	sub.Get("/{org}/{table}", func(w http.ResponseWriter, r *http.Request) {
		LogOperation(r.Context(), slog.String("action", "read"), slog.String("object", "pg/s/items"), slog.Int64("rows", 1),
			slog.Float64("op_ms", 3.486), slog.String("outcome", "ok"), slog.String("identity", "admin"),
			slog.Any("roles", []string{"admin"}), slog.String("project", "demo"))
		_, _ = io.WriteString(w, `{"id":1}`)
	})
	r.Mount("/api/v1", sub)
	for range 2 { // the second from the route cache
		req := httptest.NewRequest("GET", "/api/v1/demo/items", nil)
		req.Header.Set(RequestIDHeader, "caller-1")
		req.RemoteAddr = "127.0.0.1:48838"
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	if len(c.recs) != 2 {
		t.Fatalf("%d records", len(c.recs))
	}
	want := `{"time":"T","level":"INFO","msg":"request","face":"rest","method":"GET","route":"/api/v1/{org}/{table}",` +
		`"path":"/api/v1/demo/items","status":200,"bytes":8,"duration_ms":D,"remote":"127.0.0.1:48838","request_id":"caller-1",` +
		`"action":"read","object":"pg/s/items","rows":1,"op_ms":3.486,"outcome":"ok","identity":"admin","roles":["admin"],"project":"demo"}` + "\n"
	mask := regexp.MustCompile(`"time":"[^"]+"|"duration_ms":[0-9.e-]+`)
	for _, rec := range c.recs {
		var sb, ob bytes.Buffer
		_ = slog.NewJSONHandler(&sb, nil).Handle(context.Background(), rec)
		_ = NewJSONHandler(&ob, nil).Handle(context.Background(), rec)
		if !bytes.Equal(sb.Bytes(), ob.Bytes()) {
			t.Fatalf("ours %q\nslog %q", ob.Bytes(), sb.Bytes())
		}
		got := mask.ReplaceAllStringFunc(sb.String(), func(s string) string {
			if s[1] == 't' {
				return `"time":"T"`
			}
			return `"duration_ms":D`
		})
		if got != want {
			t.Fatalf("line\n got %s\nwant %s", got, want)
		}
	}
}

// TestRouteOfCache: the cached pattern is chi's, and a pattern seen before
// costs no allocation (chi's RoutePattern joins and rewrites anew).
func TestRouteOfCache(t *testing.T) {
	cases := [][]string{
		{"/"}, {"/a/*", "/b"}, {"/minimal/api/rest/auto/v1/*", "/{org}/{project}/{type}/{schema}/{table}"},
		{"/x/*", "/*", "/y/"}, {"/trail/"}, {"//"}, {"/a/*", "/*/", "/c//"}, {}, {""},
	}
	for _, pats := range cases {
		rc := chi.NewRouteContext()
		rc.RoutePatterns = pats
		want := rc.RoutePattern()
		for range 2 {
			if got := routePatterns.of(rc); got != want {
				t.Fatalf("%q: %q, chi says %q", pats, got, want)
			}
		}
		req := httptest.NewRequest("GET", "/", nil)
		req = req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, rc))
		if want == "" {
			want = routeUnmatched
		}
		if got := routeOf(req); got != want {
			t.Fatalf("%q: routeOf %q, want %q", pats, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { _ = routeOf(req) }); n != 0 {
			t.Errorf("%q: %v allocations", pats, n)
		}
	}
	var c patternCache
	rc := chi.NewRouteContext()
	for i := range maxRoutePatterns + 10 {
		rc.RoutePatterns = []string{"/p/", string(rune('a' + i%26)), time.Duration(i).String()}
		if got, want := c.of(rc), rc.RoutePattern(); got != want {
			t.Fatalf("%q: %q, chi says %q", rc.RoutePatterns, got, want)
		}
	}
	if n := len(*c.m.Load()); n != maxRoutePatterns {
		t.Errorf("cache holds %d patterns", n)
	}
}

// TestTraceparentLookup: the header is read as Header.Get reads it, without
// an allocation when it is absent.
func TestTraceparentLookup(t *testing.T) {
	h := http.Header{}
	if n := testing.AllocsPerRun(100, func() { _ = traceIDFrom(headerValue(h, traceparentHeader)) }); n != 0 {
		t.Errorf("%v allocations without a traceparent", n)
	}
	for _, v := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x"} {
		h := http.Header{}
		if v != "" {
			h.Set("traceparent", v)
			h.Add("traceparent", "second")
		}
		if got, want := headerValue(h, traceparentHeader), h.Get("traceparent"); got != want {
			t.Errorf("%q: %q, Get says %q", v, got, want)
		}
	}
}

// TestMiddlewareAllocations bounds what a logged request costs in
// allocations in Middleware with our handler: the request's context, its
// boxed id, a new id, the request copy and chi's response writer (the
// request line, its header value and a missing traceparent cost none).
func TestMiddlewareAllocations(t *testing.T) {
	log := slog.New(LogHandler(NewJSONHandler(io.Discard, nil)))
	op := []slog.Attr{slog.String("action", "read"), slog.Any("roles", []string{"admin"})}
	h := Middleware(FaceREST, nil, log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		LogOperation(r.Context(), op...)
	}))
	req := httptest.NewRequest("GET", "/x", nil)
	w := &discardWriter{h: http.Header{}}
	if n := testing.AllocsPerRun(200, func() { clear(w.h); h.ServeHTTP(w, req) }); n > 5 {
		t.Errorf("%v allocations a request, want at most 5", n)
	}
}
