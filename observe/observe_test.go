package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRequestIDFrom(t *testing.T) {
	tests := []struct {
		in   string
		keep bool
	}{
		{"abc-123", true},
		{"3f2c1a9e-5b1d-4c8e-9f00-1234567890ab", true},
		{"trace/1:2+3=4_5.6", true},
		{"", false},
		{strings.Repeat("a", maxRequestIDLen+1), false},
		{"has space", false},
		{"quote\"", false},
		{"new\nline", false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		got := requestIDFrom(tt.in)
		if (got == tt.in) != tt.keep {
			t.Errorf("requestIDFrom(%q) = %q, keep %v", tt.in, got, tt.keep)
		}
		if got == "" {
			t.Errorf("requestIDFrom(%q) is empty", tt.in)
		}
	}
	if a, b := newRequestID(), newRequestID(); a == b || len(a) != 16 {
		t.Errorf("ids %q %q", a, b)
	}
}

func TestTraceIDFrom(t *testing.T) {
	tests := map[string]string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": "4bf92f3577b34da6a3ce929d0e0e4736",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01": "",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7":    "",
		"garbage": "",
		"":        "",
	}
	for in, want := range tests {
		if got := traceIDFrom(in); got != want {
			t.Errorf("traceIDFrom(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMiddlewareChi: request ids, the face, the route pattern of chi, the
// request log line and the series.
// TestMiddlewareChi: Middleware inside a chi router, and Front in front of
// one, give the same context, answers, series and lines.
func TestMiddlewareChi(t *testing.T) {
	t.Run("Middleware", func(t *testing.T) { testMiddlewareChi(t, false) })
	t.Run("Front", func(t *testing.T) { testMiddlewareChi(t, true) })
}

func testMiddlewareChi(t *testing.T, front bool) {
	m := NewMetrics("test")
	var logs bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	r := chi.NewRouter()
	var h http.Handler = r
	if front {
		h = Front(FaceREST, m, log, r)
	} else {
		r.Use(Middleware(FaceREST, m, log))
	}
	var seen struct{ id, face, trace, param, path string }
	r.Get("/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		seen.id, seen.face, seen.trace = RequestID(r.Context()), Face(r.Context()), TraceID(r.Context())
		seen.param, seen.path = chi.URLParam(r, "id"), r.PathValue("id")
		log.InfoContext(r.Context(), "inside")
		w.WriteHeader(http.StatusTeapot)
	})
	r.Get("/livez", func(w http.ResponseWriter, _ *http.Request) {})
	r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	srv := httptest.NewServer(h)
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/things/42", nil)
	req.Header.Set(RequestIDHeader, "caller-id-1")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || resp.Header.Get(RequestIDHeader) != "caller-id-1" {
		t.Fatalf("status %d id %q", resp.StatusCode, resp.Header.Get(RequestIDHeader))
	}
	if seen.id != "caller-id-1" || seen.face != FaceREST || seen.trace != "4bf92f3577b34da6a3ce929d0e0e4736" || seen.param != "42" || seen.path != "42" {
		t.Fatalf("context %+v", seen)
	}
	resp, err = srv.Client().Get(srv.URL + "/things/7")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id := resp.Header.Get(RequestIDHeader); len(id) != 16 {
		t.Fatalf("generated id %q", id)
	}
	for _, p := range []string{"/nowhere/1", "/nowhere/2", "/livez"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("recovered %v, want the abort to go on", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/boom", nil))
	}()

	route := "/things/{id}"
	if n := testutil.ToFloat64(m.requests.WithLabelValues(FaceREST, route, "GET", "418")); n != 2 {
		t.Errorf("requests for %s = %v", route, n)
	}
	if n := testutil.ToFloat64(m.requests.WithLabelValues(FaceREST, routeUnmatched, "GET", "404")); n != 2 {
		t.Errorf("unmatched requests = %v", n)
	}
	if n := testutil.ToFloat64(m.requests.WithLabelValues(FaceREST, "/boom", "GET", "500")); n != 1 {
		t.Errorf("aborted requests = %v", n)
	}
	if n := testutil.ToFloat64(m.inFlight.WithLabelValues(FaceREST)); n != 0 {
		t.Errorf("in flight = %v", n)
	}
	if c := testutil.CollectAndCount(m.duration); c != 4 {
		t.Errorf("%d duration series", c)
	}

	var requests, inside int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line not JSON: %s", line)
		}
		if rec["request_id"] == nil || rec["request_id"] == "" {
			t.Errorf("log line without request_id: %s", line)
		}
		switch rec["msg"] {
		case "request":
			requests++
			if rec["route"] == "/livez" && rec["level"] != "DEBUG" {
				t.Errorf("probe logged at %v", rec["level"])
			}
		case "inside":
			inside++
			if rec["request_id"] == "caller-id-1" && rec["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("no trace id: %s", line)
			}
		}
		if strings.Count(line, `"request_id"`) != 1 {
			t.Errorf("request_id twice: %s", line)
		}
	}
	if requests != 6 || inside != 2 {
		t.Errorf("%d request lines, %d inside lines:\n%s", requests, inside, logs.String())
	}
}

// TestMiddlewareServeMux: below a ServeMux the pattern comes from the mux.
func TestMiddlewareServeMux(t *testing.T) {
	m := NewMetrics("test")
	mux := http.NewServeMux()
	mux.HandleFunc("/rpc/v1", func(w http.ResponseWriter, r *http.Request) {
		if Face(r.Context()) != FaceMCP || RequestID(r.Context()) == "" {
			t.Errorf("context face %q id %q", Face(r.Context()), RequestID(r.Context()))
		}
		_, _ = io.WriteString(w, "ok")
	})
	h := Middleware(FaceMCP, m, nil)(mux)
	for _, p := range []string{"/rpc/v1", "/rpc/v1", "/other"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", p, nil))
	}
	if n := testutil.ToFloat64(m.requests.WithLabelValues(FaceMCP, "/rpc/v1", "POST", "200")); n != 2 {
		t.Errorf("rpc requests = %v", n)
	}
	if n := testutil.ToFloat64(m.requests.WithLabelValues(FaceMCP, routeUnmatched, "POST", "404")); n != 1 {
		t.Errorf("unmatched = %v", n)
	}
}

func TestLimiter(t *testing.T) {
	if NewLimiter(0, 5, nil) != nil || NewLimiter(-1, 0, nil) != nil {
		t.Fatal("rate 0 must switch limiting off")
	}
	var nilLimiter *Limiter
	if ok, _ := nilLimiter.Allow("x"); !ok {
		t.Fatal("nil limiter refused")
	}
	m := NewMetrics("test")
	l := NewLimiter(2, 3, m)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	for i := range 3 {
		if ok, _ := l.Allow("alice"); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	ok, wait := l.Allow("alice")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("4th request: ok %v wait %v", ok, wait)
	}
	if ok, _ := l.Allow("bob"); !ok {
		t.Fatal("another identity shares alice's bucket")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("alice"); !ok {
		t.Fatal("token not refilled after 1/rate")
	}
	now = now.Add(time.Hour)
	for range 3 {
		if ok, _ := l.Allow("alice"); !ok {
			t.Fatal("bucket not full after an hour")
		}
	}
	if ok, _ := l.Allow("alice"); ok {
		t.Fatal("bucket holds more than the burst")
	}
	// Idle, refilled buckets are forgotten.
	now = now.Add(2 * idleForget)
	l.Allow("carol")
	if _, kept := l.buckets["bob"]; kept {
		t.Error("idle bucket kept")
	}
	if d := NewLimiter(2.5, 0, nil); d.burst != 3 {
		t.Errorf("default burst %v", d.burst)
	}

	// Admit answers 429 with Retry-After and the envelope, and counts it.
	l = NewLimiter(0.5, 1, m)
	req := httptest.NewRequest("GET", "/", nil).WithContext(WithRequestID(WithFace(context.Background(), FaceMCP), "rid"))
	if !l.Admit(httptest.NewRecorder(), req, "k") {
		t.Fatal("first request refused")
	}
	rec := httptest.NewRecorder()
	if l.Admit(rec, req, "k") {
		t.Fatal("second request admitted")
	}
	var body struct {
		Error struct{ Code, Message, RequestID string } `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || body.Error.Code != CodeRateLimited || !strings.Contains(body.Error.Message, "0.5 requests per second") {
		t.Fatalf("429 answer: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if n := testutil.ToFloat64(m.limited.WithLabelValues(FaceMCP)); n != 1 {
		t.Errorf("rate_limited = %v", n)
	}

	// RateLimit passes requests without a key.
	var passed atomic.Int32
	h := RateLimit(l, func(r *http.Request) string { return r.Header.Get("K") })(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed.Add(1) }))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	if passed.Load() != 3 {
		t.Errorf("keyless requests passed %d of 3", passed.Load())
	}
	if RateLimit(nil, nil)(h) == nil {
		t.Error("nil limiter must return next")
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.Refused(context.Background(), "lock")
	m.WatchPools(nil)
	m.WatchAudit(nil)
	m.WatchSessions(nil, 0)
	if m.Registry() != nil {
		t.Error("nil registry expected")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Errorf("nil metrics handler %d", rec.Code)
	}
	// Middleware without metrics or log still sets the id.
	h := Middleware(FaceREST, nil, nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Header().Get(RequestIDHeader) == "" {
		t.Error("no request id")
	}
}

// TestStateCollector: pools, audit and sessions are read at scrape time;
// the session count is reused for maxAge and survives a failed count.
func TestStateCollector(t *testing.T) {
	m := NewMetrics("v1.2.3")
	m.WatchPools(func() []Pool {
		return []Pool{{Database: "demo/demo/pg/public", Max: 4, Idle: 1, Acquired: 2, Acquires: 10, EmptyAcquires: 3, CanceledAcquires: 1, AcquireWait: 1500 * time.Millisecond}}
	})
	m.WatchAudit(func() AuditStats { return AuditStats{Queued: 2, Written: 40, DroppedFull: 5, DroppedError: 1} })
	var counts atomic.Int32
	fail := atomic.Bool{}
	m.WatchSessions(func(context.Context) (int64, error) {
		counts.Add(1)
		if fail.Load() {
			return 0, errors.New("store down")
		}
		return 7, nil
	}, time.Hour)
	want := `
# HELP minimal_ai_sessions_active Open AI sessions that have not idled out, across the control plane.
# TYPE minimal_ai_sessions_active gauge
minimal_ai_sessions_active 7
# HELP minimal_db_pool_connections Connections of the database's pool by state (idle, acquired, constructing).
# TYPE minimal_db_pool_connections gauge
minimal_db_pool_connections{database="demo/demo/pg/public",state="acquired"} 2
minimal_db_pool_connections{database="demo/demo/pg/public",state="constructing"} 0
minimal_db_pool_connections{database="demo/demo/pg/public",state="idle"} 1
# HELP minimal_db_pool_acquire_wait_seconds_total Total time spent acquiring connections from the database's pool.
# TYPE minimal_db_pool_acquire_wait_seconds_total counter
minimal_db_pool_acquire_wait_seconds_total{database="demo/demo/pg/public"} 1.5
# HELP minimal_audit_dropped_total Audit entries lost: queue full (reason queue_full) or store write failed (reason write_error). Each is still in the log.
# TYPE minimal_audit_dropped_total counter
minimal_audit_dropped_total{reason="queue_full"} 5
minimal_audit_dropped_total{reason="write_error"} 1
# HELP minimal_build_info Always 1; the version label names the running build.
# TYPE minimal_build_info gauge
minimal_build_info{version="v1.2.3"} 1
`
	names := []string{MetricSessions, MetricPoolConns, MetricPoolAcquireWait, MetricAuditDropped, MetricBuildInfo}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	if counts.Load() != 1 {
		t.Errorf("sessions counted %d times within maxAge", counts.Load())
	}
	m.WatchSessions(func(context.Context) (int64, error) { counts.Add(1); return 0, errors.New("down") }, -1)
	if _, err := m.Registry().Gather(); err != nil {
		t.Fatal(err)
	}
	if counts.Load() != 2 {
		t.Errorf("negative maxAge did not count at scrape")
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(`
# HELP minimal_ai_sessions_active Open AI sessions that have not idled out, across the control plane.
# TYPE minimal_ai_sessions_active gauge
minimal_ai_sessions_active 0
`), MetricSessions); err != nil {
		t.Fatal(err)
	}
	m.Refused(WithFace(context.Background(), FaceREST), "lock")
	m.Refused(context.Background(), "hidden")
	if n := testutil.ToFloat64(m.refusals.WithLabelValues(FaceREST, "lock")); n != 1 {
		t.Errorf("refusals = %v", n)
	}
	if n := testutil.ToFloat64(m.refusals.WithLabelValues("other", "hidden")); n != 1 {
		t.Errorf("refusals without face = %v", n)
	}
}
