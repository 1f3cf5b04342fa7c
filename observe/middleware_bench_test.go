package observe

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

// BenchmarkMiddleware is one request through Middleware inside a chi
// router with a mounted sub-router (as api mounts its faces), with metrics
// and a request line.
func BenchmarkMiddleware(b *testing.B) {
	m := NewMetrics("bench")
	log := slog.New(LogHandler(NewJSONHandler(io.Discard, slog.LevelInfo)))
	r := chi.NewRouter()
	r.Use(Middleware(FaceREST, m, log))
	sub := chi.NewRouter()
	sub.Get("/{org}/{project}/{type}/{schema}/{table}", func(w http.ResponseWriter, r *http.Request) {
		LogOperation(r.Context(), slog.String("action", "read"), slog.Int64("rows", 1), slog.Any("roles", []string{"admin"}))
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	r.Mount("/minimal/api/rest/auto/v1", sub)
	req := httptest.NewRequest("GET", "/minimal/api/rest/auto/v1/demo/demo/pg/minimal_bench/items", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		clear(w.h)
		r.ServeHTTP(w, req)
	}
	reportCPU(b, start)
}

// discardWriter drops the answer; it has the methods of net/http's
// HTTP/1 ResponseWriter (Flush, Hijack, ReadFrom).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}
func (d *discardWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, http.ErrNotSupported
}
func (d *discardWriter) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }

// BenchmarkBodyDeadline is a request with a body through BodyDeadline,
// read to its end by the handler.
func BenchmarkBodyDeadline(b *testing.B) {
	h := BodyDeadline(time.Second)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	req := httptest.NewRequest("POST", "/", io.NopCloser(body))
	w := &deadlineWriter{discardWriter{h: http.Header{}}}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		clear(w.h)
		body.Seek(0, io.SeekStart)
		req.Body = io.NopCloser(body)
		h.ServeHTTP(w, req)
	}
	reportCPU(b, start)
}

// deadlineWriter is a discardWriter whose connection takes deadlines.
type deadlineWriter struct{ discardWriter }

func (d *deadlineWriter) SetReadDeadline(time.Time) error { return nil }
