package observe

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
)

// routeUnmatched labels requests no route matched, so a scan of random
// paths cannot grow the series without bound.
const routeUnmatched = "unmatched"

// quiet routes are logged at debug level: probes and scrapes would
// otherwise drown the request log.
var quiet = map[string]bool{"/livez": true, "/readyz": true, "/metrics": true}

// opLogAttrs is the room an opLog keeps for an operation's attributes
// without an allocation of their own (engine's line has at most 10).
const opLogAttrs = 12

// opLog holds the attributes of the first data operation of a request
// (LogOperation) for the request's one log line.
type opLog struct {
	mu      sync.Mutex
	attrs   []slog.Attr
	buf     [opLogAttrs]slog.Attr // attrs' storage when they fit
	taken   bool                  // an operation's attributes are held
	written bool                  // the request line is written: later operations log their own
}

type opLogKey struct{}

// LogOperation hands the attributes of a data operation (engine's audit)
// to the log line of the request ctx belongs to, and reports whether it
// took them: only the first operation of a request served by Middleware
// with a logger, before its line is written. An operation it does not take
// logs a line of its own. It copies attrs: the caller may reuse them.
func LogOperation(ctx context.Context, attrs ...slog.Attr) bool {
	l, _ := ctx.Value(opLogKey{}).(*opLog)
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken || l.written {
		return false
	}
	l.attrs, l.taken = append(l.buf[:0], attrs...), true
	return true
}

// requestCtx is the context Middleware gives a request: one value that
// answers for the request id (chi's middleware.RequestIDKey, so
// middleware.GetReqID finds it), the face and the request's opLog, instead
// of a context.WithValue layer and a boxed string for each. Other keys go
// to the parent.
type requestCtx struct {
	context.Context
	id   any // the request id, a string boxed once
	face any // the face, a string boxed once per Middleware
	ops  *opLog
	log  opLog // ops' storage when the request has a log line

	idHeader [1]string               // the X-Request-Id header's value slice
	line     [reqLineAttrs]slog.Attr // the request line's attributes
}

// reqLineAttrs is the number of attributes of the request line's first group.
const reqLineAttrs = 8

func (c *requestCtx) Value(key any) any {
	switch key {
	case any(middleware.RequestIDKey):
		return c.id
	case any(faceKey):
		return c.face
	case any(opLogKey{}):
		if c.ops == nil {
			return nil
		}
		return c.ops
	}
	return c.Context.Value(key)
}

// Middleware is the outermost layer of a face's handler. For every request
// it sets the request id (the caller's X-Request-Id when well formed, else
// a new one) in the context and on the answer, records the face and the
// caller's W3C trace id in the context (with tracing on, the trace id of
// the request's server span, which continues the caller's), and when the
// answer is done counts it in the request series by route pattern and
// status, ends the span and writes one log line ("request") with the
// request id and the request's data operation (LogOperation): at info
// level, warn for a 5xx answer, debug for probes and scrapes.
//
// The route is chi's route pattern when the middleware runs inside a chi
// router (api uses it with r.Use), else the pattern of the http.ServeMux
// below it (the MCP listener), else "unmatched". m and log may be nil.
func Middleware(face string, m *Metrics, log *slog.Logger) func(http.Handler) http.Handler {
	faceValue := any(face)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := requestIDFrom(r.Header.Get(RequestIDHeader))
			rc := &requestCtx{Context: r.Context(), id: id, face: faceValue}
			rc.idHeader[0] = id
			var ops *opLog
			if log != nil {
				ops = &rc.log
				rc.ops = ops
			}
			ctx := context.Context(rc)
			// Header.Get would canonicalize "traceparent" again on every request.
			if tid := traceIDFrom(headerValue(r.Header, traceparentHeader)); tid != "" {
				ctx = contextWithTrace(ctx, tid)
			}
			ctx, span := startServerSpan(ctx, propagation.HeaderCarrier(r.Header), r.Method, r.URL.Path, face, id)
			w.Header()[RequestIDHeader] = rc.idHeader[:] // canonical already: no Set to canonicalize it
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			r2 := r.WithContext(ctx)
			var inFlight prometheus.Gauge
			if m != nil {
				inFlight = m.inFlightOf(face)
				inFlight.Inc()
			}
			defer func() {
				v := recover()
				status := ww.Status()
				switch {
				case v != nil && status == 0:
					status = http.StatusInternalServerError
				case status == 0:
					status = http.StatusOK
				}
				route := routeOf(r2)
				end := time.Now()
				d := end.Sub(start)
				endServerSpan(span, r.Method, route, status)
				if m != nil {
					inFlight.Dec()
					rs := m.request(face, route, r.Method, status)
					rs.count.Inc()
					rs.duration.Observe(d.Seconds())
				}
				if log != nil {
					level := slog.LevelInfo
					switch {
					case quiet[route]:
						level = slog.LevelDebug
					case status >= 500:
						level = slog.LevelWarn
					}
					ops.mu.Lock()
					ops.written = true
					op := ops.attrs
					ops.mu.Unlock()
					if log.Enabled(ctx, level) {
						// A record of its own, without the caller's pc
						// (Logger.LogAttrs walks the stack for it; the
						// line never shows it). The attributes ride in
						// groups without a key, which every handler
						// writes inline (the line is the same): a record
						// keeps 5 attributes in place and copies the rest
						// to a slice of its own, so 20 loose ones cost a
						// second allocation per request. request_id stays
						// loose: LogHandler looks for it there.
						// The line's time is the end of the request,
						// read once for the duration too.
						rec := slog.NewRecord(end, level, "request", 0)
						rc.line = [reqLineAttrs]slog.Attr{
							slog.String("face", face), slog.String("method", r.Method), slog.String("route", route),
							slog.String("path", r.URL.Path), slog.Int("status", status), slog.Int("bytes", ww.BytesWritten()),
							slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.String("remote", r.RemoteAddr)}
						rec.AddAttrs(slog.Attr{Value: slog.GroupValue(rc.line[:]...)}, slog.String("request_id", id))
						if len(op) > 0 {
							rec.AddAttrs(slog.Attr{Value: slog.GroupValue(op...)})
						}
						if v != nil {
							rec.AddAttrs(slog.Bool("aborted", true))
						}
						_ = log.Handler().Handle(ctx, rec)
					}
				}
				if v != nil {
					panic(v)
				}
			}()
			next.ServeHTTP(ww, r2)
		})
	}
}

// routeOf returns the pattern that served r: chi's when a chi router
// matched, else the http.ServeMux pattern set on r, else routeUnmatched.
func routeOf(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := routePatterns.of(rc); p != "" {
			return p
		}
		return routeUnmatched
	}
	if r.Pattern != "" {
		return r.Pattern
	}
	return routeUnmatched
}

// traceparentHeader is the canonical form of the W3C "traceparent" header.
const traceparentHeader = "Traceparent"

// headerValue is h.Get(key) for a key in canonical form.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxRoutePatterns bounds the cache of chi's route patterns: there are as
// many as the routers have routes.
const maxRoutePatterns = 1024

// patternCache holds chi's RoutePattern by the patterns it joins (chi
// builds the string anew on every call, in up to four allocations). The
// map is never changed once published: a new pattern publishes a copy.
type patternCache struct {
	mu sync.Mutex // serializes writers
	m  atomic.Pointer[map[string]string]
}

var routePatterns patternCache

// of returns rc.RoutePattern().
func (c *patternCache) of(rc *chi.Context) string {
	var a [256]byte
	k := a[:0]
	for _, p := range rc.RoutePatterns {
		k = append(k, p...)
	}
	if m := c.m.Load(); m != nil {
		if p, ok := (*m)[string(k)]; ok {
			return p
		}
	}
	p := rc.RoutePattern()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	var n int
	if old != nil {
		n = len(*old)
	}
	if n < maxRoutePatterns {
		m := make(map[string]string, n+1)
		if old != nil {
			maps.Copy(m, *old)
		}
		m[string(k)] = p
		c.m.Store(&m)
	}
	return p
}
