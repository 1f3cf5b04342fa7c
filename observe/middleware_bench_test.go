package observe

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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
	for b.Loop() {
		clear(w.h)
		r.ServeHTTP(w, req)
	}
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
