package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// countingWriter counts the writes it gets.
type countingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

func (c *countingWriter) state() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String(), c.writes
}

// TestLogWriter: lines wait in the buffer and go out together, within the
// interval or at Flush; a line bigger than the buffer goes out at once;
// after Close every line goes straight through.
func TestLogWriter(t *testing.T) {
	out := &countingWriter{}
	lw := NewLogWriter(out, 50*time.Millisecond)
	for range 100 {
		_, _ = lw.Write([]byte("a line\n"))
	}
	if text, n := out.state(); n != 0 || text != "" {
		t.Fatalf("written before the interval: %d writes", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		text, n := out.state()
		if n == 1 && strings.Count(text, "a line\n") == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the interval: %d writes, %d lines", n, strings.Count(text, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, _ = lw.Write([]byte("b\n"))
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if text, n := out.state(); n != 2 || !strings.HasSuffix(text, "b\n") {
		t.Fatalf("Flush: %d writes", n)
	}
	big := strings.Repeat("x", logBufferSize+1)
	_, _ = lw.Write([]byte("c\n"))
	_, _ = lw.Write([]byte(big))
	if text, n := out.state(); n != 4 || !strings.HasSuffix(text, "c\n"+big) {
		t.Fatalf("a line over the buffer: %d writes", n)
	}
	_, _ = lw.Write([]byte("d\n"))
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = lw.Write([]byte("e\n"))
	if text, n := out.state(); n != 6 || !strings.HasSuffix(text, "d\ne\n") {
		t.Fatalf("Close and after: %d writes", n)
	}
}

// TestOneLinePerRequest: a request's first data operation rides on its one
// log line; a second one is refused (it logs its own line); an operation
// outside a logged request is refused too.
func TestOneLinePerRequest(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	took := make(chan [2]bool, 1)
	h := Middleware(FaceREST, nil, log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := LogOperation(r.Context(), slog.String("action", "read"), slog.String("object", "pg/s/t"), slog.Int64("rows", 3))
		second := LogOperation(r.Context(), slog.String("action", "create"))
		took <- [2]bool{first, second}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	if got := <-took; got != [2]bool{true, false} {
		t.Fatalf("operations taken: %v", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines: %s", len(lines), logs.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["msg"] != "request" || rec["action"] != "read" || rec["object"] != "pg/s/t" || rec["rows"] != 3.0 || rec["status"] != 200.0 {
		t.Errorf("request line: %s", lines[0])
	}
	if LogOperation(t.Context(), slog.String("action", "read")) {
		t.Error("an operation outside a request was taken")
	}

	// Below the logger's level the line is not written, and a 5xx is a
	// warning.
	logs.Reset()
	warn := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h = Middleware(FaceREST, nil, warn)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ok", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/fail", nil))
	if text := logs.String(); strings.Count(text, "\n") != 1 || !strings.Contains(text, `"level":"WARN"`) || !strings.Contains(text, `"path":"/fail"`) {
		t.Errorf("at warn level: %s", text)
	}
}

// TestRequestContext: behind Middleware a request's context answers the
// request id (also through chi's GetReqID), the face, a trace id and a
// value an inner layer adds; a later WithRequestID wins; the attributes
// an operation hands to the line are copied, so the caller may reuse its
// slice before the line is written.
func TestRequestContext(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	type innerKey struct{}
	h := Middleware(FaceMCP, nil, log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), innerKey{}, "inner")
		if RequestID(ctx) != "rid-1" || middleware.GetReqID(ctx) != "rid-1" || Face(ctx) != FaceMCP ||
			TraceID(ctx) != "4bf92f3577b34da6a3ce929d0e0e4736" || ctx.Value(innerKey{}) != "inner" {
			t.Errorf("request context: id %q face %q trace %q", RequestID(ctx), Face(ctx), TraceID(ctx))
		}
		if got := RequestID(WithRequestID(ctx, "rid-2")); got != "rid-2" {
			t.Errorf("WithRequestID under the request: %q", got)
		}
		attrs := []slog.Attr{slog.String("action", "read"), slog.String("object", "pg/s/t")}
		if !LogOperation(ctx, attrs...) {
			t.Error("the operation was not taken")
		}
		attrs[0], attrs[1] = slog.String("action", "reused"), slog.String("object", "reused")
	}))
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set(RequestIDHeader, "rid-1")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	var rec map[string]any
	if err := json.Unmarshal(logs.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, logs.String())
	}
	if rec["action"] != "read" || rec["object"] != "pg/s/t" || rec["request_id"] != "rid-1" || rec["face"] != FaceMCP {
		t.Errorf("request line: %s", logs.String())
	}
}
