package observe

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRequestLineValuer: the request line's first attributes, kept as a
// requestLine, are written by JSONHandler from its fields as slog writes
// the group LogValue makes, and that group is the attributes the line has
// always had; under a key (which the request line never uses) it is a
// group of that key, as slog writes it. Strings that need escaping,
// statuses, sizes and durations around the millisecond, in every chain.
func TestRequestLineValuer(t *testing.T) {
	tm := time.Date(2026, 12, 2, 6, 40, 1, 123456789, time.UTC)
	var lines []requestLine
	for i, s := range specialStrings() {
		lines = append(lines, requestLine{face: s, method: "GET", route: "/r/" + s, path: s + "/p", remote: s,
			status: 200 + i%400, bytes: i * 37, d: time.Duration(i) * 997 * time.Nanosecond})
	}
	for _, d := range []time.Duration{0, time.Microsecond, 999 * time.Nanosecond, time.Millisecond, 1500 * time.Microsecond,
		23711 * time.Microsecond, time.Hour, 1000 * time.Hour} {
		lines = append(lines, requestLine{face: FaceREST, method: "POST", route: routeUnmatched, path: "/x", remote: "[::1]:1", status: 503, d: d})
	}
	chains := map[string]func(slog.Handler) slog.Handler{
		"plain": nil,
		"attrs": func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("app", "minimal")}) },
		"group": func(h slog.Handler) slog.Handler { return h.WithGroup("g") },
		"both": func(h slog.Handler) slog.Handler {
			return h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("n", 1)}).WithGroup("h")
		},
	}
	for name, chain := range chains {
		p := newPair(slog.LevelDebug, chain, "valuer/"+name)
		q := newPair(slog.LevelDebug, chain, "group/"+name)
		for i := range lines {
			l := &lines[i]
			as := []slog.Attr{slog.String("face", l.face), slog.String("method", l.method), slog.String("route", l.route),
				slog.String("path", l.path), slog.Int("status", l.status), slog.Int("bytes", l.bytes),
				slog.Float64("duration_ms", float64(l.d.Microseconds())/1000), slog.String("remote", l.remote)}
			for _, key := range []string{"", "line"} {
				valuer := record(tm, slog.LevelInfo, "request", slog.Any(key, l), slog.String("request_id", "id"))
				group := record(tm, slog.LevelInfo, "request", slog.Attr{Key: key, Value: slog.GroupValue(as...)}, slog.String("request_id", "id"))
				p.check(t, valuer)
				q.check(t, group)
				if p.gbuf.String() != q.wbuf.String() {
					t.Fatalf("%s key %q: the valuer's line\n%s\nthe attributes'\n%s", name, key, p.gbuf.String(), q.wbuf.String())
				}
			}
		}
	}
}

// TestInFlightByFace: each Middleware counts its requests in flight in the
// gauge of its own face, also when two share one Metrics, and a face's
// series appears with its first request.
func TestInFlightByFace(t *testing.T) {
	m := NewMetrics("test")
	inside := make(chan struct{})
	release := make(chan struct{})
	hold := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		inside <- struct{}{}
		<-release
	})
	log := slog.New(LogHandler(NewJSONHandler(io.Discard, nil)))
	faces := map[string]http.Handler{
		FaceREST: Middleware(FaceREST, m, log)(hold),
		FaceMCP:  Middleware(FaceMCP, m, nil)(hold),
	}
	if n := testutil.CollectAndCount(m.inFlight); n != 0 {
		t.Fatalf("%d in-flight series before any request", n)
	}
	var wg sync.WaitGroup
	serve := func(face string, n int) {
		for range n {
			wg.Go(func() { faces[face].ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) })
			<-inside
		}
	}
	serve(FaceREST, 3)
	serve(FaceMCP, 1)
	want := map[string]float64{FaceREST: 3, FaceMCP: 1}
	check := func() {
		t.Helper()
		if n := testutil.CollectAndCount(m.inFlight); n != len(want) {
			t.Errorf("%d in-flight series, want %d", n, len(want))
		}
		for face, w := range want {
			if n := testutil.ToFloat64(m.inFlight.WithLabelValues(face)); n != w {
				t.Errorf("%s: %v in flight, want %v", face, n, w)
			}
		}
	}
	check()
	close(release)
	wg.Wait()
	want = map[string]float64{FaceREST: 0, FaceMCP: 0}
	check()
	release = make(chan struct{})
	serve(FaceREST, 2)
	want[FaceREST] = 2
	check()
	close(release)
	wg.Wait()
}
