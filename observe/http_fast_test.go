package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
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
// boxed id, a new id and the request copy (the request line, its header
// value, the response writer and a missing traceparent cost none).
func TestMiddlewareAllocations(t *testing.T) {
	log := slog.New(LogHandler(NewJSONHandler(io.Discard, nil)))
	op := []slog.Attr{slog.String("action", "read"), slog.Any("roles", []string{"admin"})}
	h := Middleware(FaceREST, nil, log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		LogOperation(r.Context(), op...)
	}))
	req := httptest.NewRequest("GET", "/x", nil)
	w := &discardWriter{h: http.Header{}}
	if n := testing.AllocsPerRun(200, func() { clear(w.h); h.ServeHTTP(w, req) }); n > 4 {
		t.Errorf("%v allocations a request, want at most 4", n)
	}
}

// TestRequestIDOf: a new id is the hex of the random value's 8 bytes, low
// byte first (as encoding/hex wrote it), in one allocation.
func TestRequestIDOf(t *testing.T) {
	for i := range 10000 {
		v := rand.Uint64()
		switch i {
		case 0:
			v = 0
		case 1:
			v = math.MaxUint64
		case 2:
			v = 0x0123456789abcdef
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		if got, want := requestIDOf(v), hex.EncodeToString(b[:]); got != want {
			t.Fatalf("%#x: %q, want %q", v, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = newRequestID() }); n != 1 {
		t.Errorf("%v allocations", n)
	}
}

// callLog is net/http's HTTP/1 writer as a log of the calls it gets.
type callLog struct {
	h     http.Header
	calls []string
}

func (c *callLog) Header() http.Header { return c.h }
func (c *callLog) Write(p []byte) (int, error) {
	c.calls = append(c.calls, "write "+string(p))
	if string(p) == "short" {
		return 2, io.ErrShortWrite
	}
	return len(p), nil
}
func (c *callLog) WriteHeader(code int) { c.calls = append(c.calls, "status "+strconv.Itoa(code)) }
func (c *callLog) Flush()               { c.calls = append(c.calls, "flush") }
func (c *callLog) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.calls = append(c.calls, "hijack")
	return nil, nil, http.ErrHijacked
}
func (c *callLog) ReadFrom(r io.Reader) (int64, error) {
	b, err := io.ReadAll(r)
	c.calls = append(c.calls, "readfrom "+string(b))
	return int64(len(b)), err
}
func (c *callLog) SetReadDeadline(time.Time) error {
	c.calls = append(c.calls, "deadline")
	return nil
}

// TestRespWriterLikeChi: for net/http's HTTP/1 writer, the writer
// Middleware keeps in the request's allocation passes on the same calls as
// chi's middleware.NewWrapResponseWriter and counts the same status and
// bytes, for every sequence of the calls a handler makes.
func TestRespWriterLikeChi(t *testing.T) {
	type step func(w http.ResponseWriter) string
	steps := map[string]step{
		"103": func(w http.ResponseWriter) string { w.WriteHeader(http.StatusEarlyHints); return "" },
		"101": func(w http.ResponseWriter) string { w.WriteHeader(http.StatusSwitchingProtocols); return "" },
		"201": func(w http.ResponseWriter) string { w.WriteHeader(http.StatusCreated); return "" },
		"500": func(w http.ResponseWriter) string { w.WriteHeader(http.StatusInternalServerError); return "" },
		"write": func(w http.ResponseWriter) string {
			n, err := w.Write([]byte("body"))
			return fmt.Sprint(n, err)
		},
		"short": func(w http.ResponseWriter) string {
			n, err := w.Write([]byte("short"))
			return fmt.Sprint(n, err)
		},
		"flush": func(w http.ResponseWriter) string { w.(http.Flusher).Flush(); return "" },
		"hijack": func(w http.ResponseWriter) string {
			_, _, err := w.(http.Hijacker).Hijack()
			return fmt.Sprint(err)
		},
		"readfrom": func(w http.ResponseWriter) string {
			n, err := w.(io.ReaderFrom).ReadFrom(strings.NewReader("copied"))
			return fmt.Sprint(n, err)
		},
		"controller": func(w http.ResponseWriter) string {
			return fmt.Sprint(http.NewResponseController(w).SetReadDeadline(time.Time{}))
		},
	}
	names := slices.Sorted(maps.Keys(steps))
	run := func(ours bool, seq []string) []string {
		u := &callLog{h: http.Header{}}
		var w statusWriter
		if ours {
			rw := &respWriter{ResponseWriter: u}
			w = rw
		} else {
			w = middleware.NewWrapResponseWriter(u, 1)
		}
		var out []string
		for _, s := range seq {
			out = append(out, s+": "+steps[s](w))
		}
		return append(append(out, u.calls...), fmt.Sprint("status ", w.Status(), " bytes ", w.BytesWritten()))
	}
	var seqs [][]string
	for _, a := range names {
		for _, b := range names {
			for _, c := range names {
				seqs = append(seqs, []string{a, b, c})
			}
		}
	}
	for _, seq := range seqs {
		if got, want := run(true, seq), run(false, seq); !slices.Equal(got, want) {
			t.Fatalf("%v:\n ours %q\n chi  %q", seq, got, want)
		}
	}
	// The type chi picks for net/http's HTTP/1 writer has the same methods.
	var _ fullWriter = &respWriter{}
	if _, ok := middleware.NewWrapResponseWriter(&callLog{}, 1).(fullWriter); !ok {
		t.Fatal("chi's writer is not a fullWriter")
	}
}

// TestFrontWriter: Front and Middleware keep their writer in the request's
// allocation for net/http's HTTP/1 writer only, and use chi's otherwise.
func TestFrontWriter(t *testing.T) {
	var got http.ResponseWriter
	h := Middleware(FaceREST, nil, nil)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { got = w }))
	for _, c := range []struct {
		w     http.ResponseWriter
		proto int
		ours  bool
	}{
		{&callLog{h: http.Header{}}, 1, true},
		{&callLog{h: http.Header{}}, 2, false},
		{httptest.NewRecorder(), 1, false},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.ProtoMajor = c.proto
		h.ServeHTTP(c.w, req)
		if _, ours := got.(*respWriter); ours != c.ours {
			t.Errorf("%T HTTP/%d: writer %T", c.w, c.proto, got)
		}
	}
}

// TestAttach: an attached value is answered by the request's context and
// every context made from it, as context.WithValue's would be; one a
// request, and none on a context Middleware did not make.
func TestAttach(t *testing.T) {
	type key struct{}
	type other struct{}
	var inner, outer context.Context
	h := Middleware(FaceREST, nil, slog.New(LogHandler(NewJSONHandler(io.Discard, nil))))(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		outer = r.Context()
		if !Attach(r.Context(), key{}, "p") {
			t.Error("Attach refused on the request's context")
		}
		if Attach(r.Context(), other{}, "q") || Attach(r.Context(), key{}, "q") {
			t.Error("a second Attach was taken")
		}
		inner = context.WithoutCancel(r.Context())
	}))
	h.ServeHTTP(&callLog{h: http.Header{}}, httptest.NewRequest("GET", "/", nil))
	for _, ctx := range []context.Context{outer, inner} {
		if ctx.Value(key{}) != "p" || ctx.Value(other{}) != nil || RequestID(ctx) == "" || Face(ctx) != FaceREST {
			t.Errorf("context answers %v %v %q %q", ctx.Value(key{}), ctx.Value(other{}), RequestID(ctx), Face(ctx))
		}
	}
	if Attach(inner, other{}, "q") || Attach(context.Background(), key{}, "q") || Attach(outer, nil, "q") {
		t.Error("Attach took a context Middleware did not make")
	}
	// An attached key answers before the request's own values, as a
	// context.WithValue layer on top of them would.
	h = Middleware(FaceREST, nil, nil)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		Attach(r.Context(), faceKey, "other")
		outer = r.Context()
	}))
	h.ServeHTTP(&callLog{h: http.Header{}}, httptest.NewRequest("GET", "/", nil))
	if Face(outer) != "other" {
		t.Errorf("face %q", Face(outer))
	}
}

// TestFrontRoutes: Front's handler is its router's chi.Routes.
func TestFrontRoutes(t *testing.T) {
	r := chi.NewRouter()
	r.Get("/a/{id}", func(http.ResponseWriter, *http.Request) {})
	routes, ok := Front(FaceREST, nil, nil, r).(chi.Routes)
	if !ok {
		t.Fatal("Front's handler is not a chi.Routes")
	}
	var walked []string
	_ = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		walked = append(walked, method+" "+route)
		return nil
	})
	if !slices.Equal(walked, []string{"GET /a/{id}"}) || routes.Find(chi.NewRouteContext(), "GET", "/a/1") != "/a/{id}" {
		t.Errorf("walked %q", walked)
	}
}

// TestCanonicalHeaderNames: the header names Middleware reads and writes by
// their map key are canonical, as Header.Get and Header.Set would make them.
func TestCanonicalHeaderNames(t *testing.T) {
	for _, k := range []string{RequestIDHeader, traceparentHeader, "Connection"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
}
