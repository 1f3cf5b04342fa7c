package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

// engineOp hands the request line an operation's attributes as engine's
// logOp builds them: only when info is enabled, in a slice of its own,
// the roles boxed, message and cause after a failure.
func engineOp(ctx context.Context, log *slog.Logger, d time.Duration, outcome, msg string, cause error, roles []string) {
	if cause == nil && !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("action", "read"), slog.String("object", "pg/minimal_bench/items"), slog.Int64("rows", 1),
		slog.Float64("op_ms", float64(d.Microseconds())/1000), slog.String("outcome", outcome))
	if msg != "" {
		attrs = append(attrs, slog.String("message", msg))
		if cause != nil {
			attrs = append(attrs, slog.String("cause", cause.Error()))
		}
	}
	attrs = append(attrs, slog.String("identity", "admin"), slog.Any("roles", roles), slog.String("project", "demo"))
	LogOperation(ctx, attrs...)
}

// TestRequestLineLikeSlog: every request line Middleware and Front build
// (the engine's operation on it, failures, panics, strings that need
// escaping, empty ones, a trace id) is written byte for byte as
// slog.JSONHandler writes it, alone and under WithAttrs and WithGroup.
func TestRequestLineLikeSlog(t *testing.T) {
	type op struct {
		d            time.Duration
		outcome, msg string
		cause        error
		roles        []string
	}
	ops := []*op{
		nil,
		{d: 23711 * time.Microsecond, outcome: "ok", roles: []string{"admin"}},
		{d: 0, outcome: "ok", roles: nil},
		{d: 999 * time.Microsecond, outcome: "ok", roles: []string{}},
		{d: 1500 * time.Millisecond, outcome: "ok", roles: []string{"", "a\"b", "é\u2028\xff", "\b\f\n\t<&>"}},
		{d: 7 * time.Microsecond, outcome: "conflict", msg: "duplicate key \"items_pkey\"\n", cause: errors.New("ERROR: duplicate key value violates unique constraint \"items_pkey\" (SQLSTATE 23505)\u2029\x00"), roles: []string{"reader", "writer"}},
		{d: 3600 * time.Second, outcome: "", msg: "x", cause: fmt.Errorf("wrapped: %w", errors.New("\xc0\x80")), roles: []string{"admin"}},
	}
	type req struct {
		path, remote, id, traceparent string
		status                        int
		body                          string
		panics                        bool
	}
	reqs := []req{
		{path: "/v1/demo/items", remote: "127.0.0.1:33798", status: 200, body: `{"id":1}`},
		{path: "/v1/d%C3%A9mo/it%22ems%0A%E2%80%A8%FF", remote: "[::1]:1", id: "caller-1", status: 201},
		{path: "/v1/demo/items", remote: "", id: "a\"b", status: 503, body: "x"},
		{path: "/v1/demo/items", remote: "10.0.0.1:9", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", status: 404},
		{path: "/v1/demo/items", remote: "10.0.0.1:9", panics: true},
		{path: "/unrouted", remote: "10.0.0.1:9"},
		{path: "/livez", remote: "10.0.0.1:9"},
	}
	for _, front := range []bool{false, true} {
		c := &capture{}
		log := slog.New(LogHandler(c))
		var cur *op
		var curReq req
		sub := chi.NewRouter()
		sub.Get("/{org}/{table}", func(w http.ResponseWriter, r *http.Request) {
			if cur != nil {
				engineOp(r.Context(), log, cur.d, cur.outcome, cur.msg, cur.cause, cur.roles)
				if cur.cause != nil { // a second operation logs its own line
					engineOp(r.Context(), log, cur.d, cur.outcome, cur.msg, cur.cause, cur.roles)
				}
			}
			if curReq.panics {
				panic(http.ErrAbortHandler)
			}
			if curReq.status != 0 {
				w.WriteHeader(curReq.status)
			}
			_, _ = io.WriteString(w, curReq.body)
		})
		var h http.Handler
		if front {
			mux := chi.NewRouter()
			mux.Mount("/v1", sub)
			mux.Get("/livez", func(http.ResponseWriter, *http.Request) {})
			h = Front(FaceREST, nil, log, mux)
		} else {
			mux := chi.NewRouter()
			mux.Use(Middleware(FaceMCP, NewMetrics("test"), log))
			mux.Mount("/v1", sub)
			mux.Get("/livez", func(http.ResponseWriter, *http.Request) {})
			h = mux
		}
		for _, o := range ops {
			for _, rq := range reqs {
				cur, curReq = o, rq
				u, err := url.Parse(rq.path)
				if err != nil {
					t.Fatal(err)
				}
				r := httptest.NewRequest("GET", "/", nil)
				r.URL = u
				r.RemoteAddr = rq.remote
				if rq.id != "" {
					r.Header.Set(RequestIDHeader, rq.id)
				}
				if rq.traceparent != "" {
					r.Header.Set("traceparent", rq.traceparent)
				}
				func() {
					defer func() { _ = recover() }()
					h.ServeHTTP(httptest.NewRecorder(), r)
				}()
			}
		}
		if len(c.recs) < len(ops)*len(reqs) {
			t.Fatalf("%d records", len(c.recs))
		}
		chains := map[string]func(slog.Handler) slog.Handler{
			"plain": nil,
			"attrs": func(h slog.Handler) slog.Handler {
				return h.WithAttrs([]slog.Attr{slog.String("app", "minimal")})
			},
			"group": func(h slog.Handler) slog.Handler { return h.WithGroup("g") },
		}
		for name, chain := range chains {
			p := newPair(slog.LevelDebug, chain, fmt.Sprintf("front=%v/%s", front, name))
			for _, rec := range c.recs {
				p.check(t, rec)
			}
		}
	}
}

// TestJSONFloatThousandths: a float written as its thousandths is written
// as encoding/json writes it, and so is every float next to one.
func TestJSONFloatThousandths(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("%v (%#x): %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
	near := func(m int64) {
		t.Helper()
		f := float64(m) / 1000
		check(f)
		check(math.Nextafter(f, math.Inf(1)))
		check(math.Nextafter(f, math.Inf(-1)))
		check(-f)
	}
	for m := range int64(100_000) {
		near(m)
	}
	for _, m := range []int64{999_999_999_999, 1_000_000_000_000, 1_000_000_000_001, 999_999_999_000, 1 << 40, 1<<53 - 1, 1 << 53, 1<<53 + 1, math.MaxInt64} {
		near(m)
		near(m - 1)
	}
	for range 200_000 {
		near(rand.Int64N(2_000_000_000_000))
		near(rand.Int64N(100_000_000))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-3, 5e-4, 1e9, 1e9 - 1e-3, 1e9 + 1e-3, math.Nextafter(1e9, 0), 0.1 + 0.2, 23.73, 23.711} {
		check(f)
		check(-f)
	}
}

// TestJSONHandlerEscapesShort puts every byte at every place of strings as
// short as keys are, where escaping looks at 4 bytes twice.
func TestJSONHandlerEscapesShort(t *testing.T) {
	p := newPair(nil, nil, "short")
	tm := time.Unix(1, 0)
	for c := range 256 {
		for n := 1; n <= 11; n++ {
			for pos := range n {
				b := []byte("abcdefghijk")[:n]
				b[pos] = byte(c)
				s := string(b)
				p.check(t, record(tm, slog.LevelInfo, s, slog.String(s, s), slog.Any("ss", []string{s})))
			}
		}
	}
	// two bytes to escape, one in each half
	for n := 4; n <= 7; n++ {
		for i := range n {
			for j := range n {
				b := []byte("abcdefg")[:n]
				b[i], b[j] = '"', '\n'
				s := string(b)
				p.check(t, record(tm, slog.LevelInfo, s, slog.String(s, s)))
			}
		}
	}
}

// BenchmarkRequestLineServed is one request through Middleware with the
// engine's operation on its line, logged to a LogWriter as the gateway
// does, at info level and at warn (no line): the difference is what the
// line costs.
func BenchmarkRequestLineServed(b *testing.B) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		b.Run(level.String(), func(b *testing.B) {
			lw := NewLogWriter(io.Discard, time.Hour)
			defer lw.Close()
			log := slog.New(LogHandler(NewJSONHandler(lw, level)))
			roles := []string{"admin"}
			r := chi.NewRouter()
			sub := chi.NewRouter()
			sub.Get("/{org}/{project}/{type}/{schema}/{table}", func(w http.ResponseWriter, r *http.Request) {
				engineOp(r.Context(), log, 23711*time.Microsecond, "ok", "", nil, roles)
				_, _ = w.Write([]byte(`{"ok":true}`))
			})
			r.Mount("/minimal/api/rest/auto/v1", sub)
			h := Front(FaceREST, NewMetrics("bench"), log, r)
			req := httptest.NewRequest("GET", "/minimal/api/rest/auto/v1/demo/demo/pg/minimal_bench/items", nil)
			req.RemoteAddr = "127.0.0.1:33798"
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
			reportCPU(b, start)
		})
	}
}

// TestJSONHandlerTimesBySecond: times of one second in one location,
// written from the second kept formatted, read as slog writes them, across
// locations, zone changes, leap days and the ends of the years RFC 3339
// writes, from several goroutines at once.
func TestJSONHandlerTimesBySecond(t *testing.T) {
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("IST", 5*3600+1800), time.FixedZone("W", -8*3600),
		time.FixedZone("S", 30), time.FixedZone("", 0), time.FixedZone("UTC", 0)}
	for _, name := range []string{"America/New_York", "Europe/London", "Australia/Lord_Howe"} {
		if l, err := time.LoadLocation(name); err == nil {
			locs = append(locs, l)
		}
	}
	var secs []time.Time
	for _, base := range []time.Time{
		time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC), // New York springs forward
		time.Date(2026, 11, 1, 5, 59, 58, 0, time.UTC),
		time.Date(2026, 10, 25, 0, 59, 58, 0, time.UTC), // London falls back
		time.Date(2028, 2, 28, 23, 59, 58, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 58, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 58, 0, time.UTC),
		time.Now().Truncate(time.Second),
	} {
		for i := range 4 {
			secs = append(secs, base.Add(time.Duration(i)*time.Second))
		}
	}
	nanos := []int{0, 1, 10, 100_000_000, 123_456_789, 999_999_999, 500_000_000, 20}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			p := newPair(nil, nil, fmt.Sprint("times ", g))
			ctx := context.Background()
			for _, sec := range secs {
				for _, loc := range locs {
					for _, ns := range nanos {
						tm := sec.Add(time.Duration(ns)).In(loc)
						if g%2 == 1 {
							tm = tm.Add(time.Duration(rand.IntN(1000)))
						}
						// p.check's Fatalf is for the test's goroutine
						r := record(tm, slog.LevelInfo, "t", slog.Time("at", tm), slog.Time("utc", tm.UTC()))
						p.wbuf.Reset()
						p.gbuf.Reset()
						_, _ = p.want.Handle(ctx, r), p.got.Handle(ctx, r)
						if !bytes.Equal(p.wbuf.Bytes(), p.gbuf.Bytes()) {
							t.Errorf("%s: lines differ\n got: %q\nwant: %q", p.description, p.gbuf.Bytes(), p.wbuf.Bytes())
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}
