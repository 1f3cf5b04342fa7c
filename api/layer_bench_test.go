package api_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/observe"
)

// BenchmarkLayer is the HTTP layer in front of the REST handlers as the
// server has it (request id, metrics, the JSON request line, the body
// deadline, the recoverer, chi's routing and authenticate with a verified
// token), in front of a handler that answers at once: a read refused for
// its format, before the engine is asked.
func BenchmarkLayer(b *testing.B) {
	g := newGateway(b, engine.Config{})
	log := slog.New(observe.LogHandler(observe.NewJSONHandler(io.Discard, slog.LevelInfo)))
	h := api.New(api.Deps{Engine: g.eng, Verifier: auth.NewVerifier(g.st, g.key), Store: g.st, SigningKey: g.key},
		api.Config{Logger: log, Metrics: observe.NewMetrics("bench")})
	req := httptest.NewRequest(http.MethodGet, auto+"/pg/public/items?format=bogus", nil)
	req.Header.Set(auth.HeaderName, g.admin)
	req.RemoteAddr = "127.0.0.1:40000"
	w := &benchWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status != http.StatusBadRequest {
		b.Fatalf("status %d", w.status)
	}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// benchWriter is a ResponseWriter that keeps the status and drops the
// body; it has the methods of net/http's HTTP/1 ResponseWriter (Flush,
// Hijack, ReadFrom).
type benchWriter struct {
	h      http.Header
	status int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(status int)      { w.status = status }
func (w *benchWriter) Flush()                      {}
func (w *benchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, http.ErrNotSupported
}
func (w *benchWriter) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
