package observe

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
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
func quiet(route string) bool {
	switch route {
	case "/livez", "/readyz", "/metrics":
		return true
	}
	return false
}

// opLogAttrs is the room an opLog keeps for an operation's attributes
// without an allocation of their own: engine's line has at most 10.
const opLogAttrs = 10

// opLog holds the attributes of the first data operation of a request
// (LogOperation) for the request's one log line.
type opLog struct {
	mu      sync.Mutex
	attrs   []slog.Attr
	buf     [opLogAttrs]slog.Attr // attrs' storage when they fit
	on      bool                  // the request has a log line: LogOperation finds this opLog
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
// middleware.GetReqID finds it), the face, the caller's trace id, the
// request's opLog, chi's route context (Front) and one value of the layer
// in front of the handler (Attach), instead of a context.WithValue layer
// and a boxed string for each. Other keys go to the parent.
type requestCtx struct {
	context.Context
	id    any          // the request id, a string boxed once
	face  any          // the face, a string boxed once per Middleware
	trace any          // the caller's trace id, nil without one
	route *chi.Context // Front's route context
	key   any          // Attach's key, nil before it
	val   any          // Attach's value
	log   opLog        // the request's opLog, when log.on
	rw    respWriter   // the answer's writer, for net/http's HTTP/1 writer

	idHeader [1]string   // the X-Request-Id header's value slice
	line     requestLine // the request line's first attributes
}

func (c *requestCtx) Value(key any) any {
	if c.key != nil && key == c.key {
		return c.val
	}
	switch key {
	case any(middleware.RequestIDKey):
		return c.id
	case any(faceKey):
		return c.face
	case any(opLogKey{}):
		if !c.log.on {
			return nil
		}
		return &c.log
	case any(traceKey):
		if c.trace != nil {
			return c.trace
		}
	case any(chi.RouteCtxKey):
		if c.route != nil {
			return c.route
		}
	}
	return c.Context.Value(key)
}

// Attach stores val under key in ctx when ctx is the context Middleware
// (or Front) gave a request and nothing was attached to it yet, and
// reports whether it did: ctx and every context made from it then answer
// val for key, as context.WithValue(ctx, key, val) would, without a
// context and a request copy of their own. Whoever holds ctx sees the
// value too: it is for the layer in front of a request's handler (api's
// authentication), called before the handler runs, on the request's
// goroutine. When it reports false the caller uses context.WithValue.
func Attach(ctx context.Context, key, val any) bool {
	c, ok := ctx.(*requestCtx)
	if !ok || c.key != nil || key == nil {
		return false
	}
	c.key, c.val = key, val
	return true
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
	return func(next http.Handler) http.Handler {
		return serve(face, m, log, next, nil)
	}
}

// Front is Middleware(face, m, log) in front of the chi router mux, for a
// router that is the outermost handler (api's): the route context chi
// would put in a context and a request copy of its own for every request
// is answered by the request's one context value instead. Its route
// contexts are pooled as chi pools its own. The handler is also mux's
// chi.Routes, for chi.Walk.
func Front(face string, m *Metrics, log *slog.Logger, mux *chi.Mux) http.Handler {
	return front{mux: mux, h: serve(face, m, log, mux, mux)}
}

// front is Front's handler.
type front struct {
	mux *chi.Mux
	h   http.Handler
}

var _ chi.Routes = front{}

func (f front) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.h.ServeHTTP(w, r) }

// Routes are the router's.
func (f front) Routes() []chi.Route { return f.mux.Routes() }

// Middlewares are the router's.
func (f front) Middlewares() chi.Middlewares { return f.mux.Middlewares() }

// Match is the router's.
func (f front) Match(rctx *chi.Context, method, path string) bool {
	return f.mux.Match(rctx, method, path)
}

// Find is the router's.
func (f front) Find(rctx *chi.Context, method, path string) string {
	return f.mux.Find(rctx, method, path)
}

// routeContexts pools Front's route contexts (chi.NewRouteContext).
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// statusWriter is the writer the request line reads its status and bytes
// from.
type statusWriter interface {
	http.ResponseWriter
	Status() int
	BytesWritten() int
}

// fullWriter is net/http's HTTP/1 ResponseWriter, as chi's
// middleware.NewWrapResponseWriter tells it apart.
type fullWriter interface {
	http.ResponseWriter
	http.Flusher
	http.Hijacker
	io.ReaderFrom
}

// serve is Middleware's handler; with routes, Front's.
func serve(face string, m *Metrics, log *slog.Logger, next http.Handler, routes *chi.Mux) http.Handler {
	faceValue := any(face)
	var gauge inFlightGauge
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestIDFrom(headerValue(r.Header, RequestIDHeader))
		rc := &requestCtx{Context: r.Context(), id: id, face: faceValue}
		rc.idHeader[0] = id
		ops := &rc.log
		ops.on = log != nil
		if routes != nil {
			rc.route = routeContexts.Get().(*chi.Context)
			rc.route.Reset()
			rc.route.Routes = routes
		}
		// Header.Get would canonicalize "traceparent" again on every request.
		if tid := traceIDFrom(headerValue(r.Header, traceparentHeader)); tid != "" {
			rc.trace = tid
		}
		ctx, span := startServerSpan(rc, propagation.HeaderCarrier(r.Header), r.Method, r.URL.Path, face, id)
		w.Header()[RequestIDHeader] = rc.idHeader[:] // canonical already: no Set to canonicalize it
		// chi's writer (middleware.NewWrapResponseWriter) is two
		// allocations; for net/http's HTTP/1 writer, the one it would
		// make is kept in the request's own.
		var ww statusWriter
		if fw, ok := w.(fullWriter); ok && r.ProtoMajor != 2 {
			rc.rw.ResponseWriter = fw
			ww = &rc.rw
		} else {
			ww = middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		}
		r2 := r.WithContext(ctx)
		var inFlight prometheus.Gauge
		if m != nil {
			inFlight = gauge.of(m, face)
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
				case quiet(route):
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
					// values without a key, which every handler
					// writes inline (the line is the same): a record
					// keeps 5 attributes in place and copies the rest
					// to a slice of its own, so 20 loose ones cost a
					// second allocation per request. The line's own
					// (requestLine) are a LogValuer our JSONHandler
					// writes without making them attributes, the
					// operation's a group. request_id stays loose:
					// LogHandler looks for it there. The line's time
					// is the end of the request, read once for the
					// duration too.
					rec := slog.NewRecord(end, level, "request", 0)
					rc.line = requestLine{face: face, method: r.Method, route: route, path: r.URL.Path,
						remote: r.RemoteAddr, status: status, bytes: ww.BytesWritten(), d: d}
					rec.AddAttrs(slog.Attr{Value: slog.AnyValue(&rc.line)}, slog.String("request_id", id))
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
			// As chi's router does, a route context goes back to the
			// pool only after a request that did not panic.
			if rc.route != nil {
				routeContexts.Put(rc.route)
			}
		}()
		next.ServeHTTP(ww, r2)
	})
}

// inFlightGauge is the in-flight gauge of one Middleware's face, looked
// up by its first request (as Metrics.inFlightOf would be by every
// request: the series appears with the face's first request).
type inFlightGauge struct {
	g atomic.Pointer[prometheus.Gauge]
}

// of returns m's in-flight gauge of face; every call of one inFlightGauge
// passes the same m and face.
func (f *inFlightGauge) of(m *Metrics, face string) prometheus.Gauge {
	if g := f.g.Load(); g != nil {
		return *g
	}
	g := m.inFlightOf(face)
	f.g.Store(&g)
	return g
}

// requestLine holds the attributes the request line starts with (face,
// method, route, path, status, bytes, duration_ms, remote). As a
// slog.LogValuer under an empty key it is their group, written inline by
// every handler; JSONHandler writes them from the fields without making
// the attributes. Its fields are set once, before the line is handed on.
type requestLine struct {
	face, method, route, path, remote string
	status, bytes                     int
	d                                 time.Duration
}

// durationMS is the request's duration in milliseconds, to the microsecond.
func (l *requestLine) durationMS() float64 { return float64(l.d.Microseconds()) / 1000 }

// LogValue returns the attributes as a group.
func (l *requestLine) LogValue() slog.Value {
	return slog.GroupValue(slog.String("face", l.face), slog.String("method", l.method), slog.String("route", l.route),
		slog.String("path", l.path), slog.Int("status", l.status), slog.Int("bytes", l.bytes),
		slog.Float64("duration_ms", l.durationMS()), slog.String("remote", l.remote))
}

// respWriter is the writer chi's middleware.NewWrapResponseWriter makes
// for net/http's HTTP/1 writer (its httpFancyWriter: status and bytes
// counted, Flush, Hijack and ReadFrom passed on), without Tee and Discard,
// which nothing here uses.
type respWriter struct {
	http.ResponseWriter
	code        int
	bytes       int
	wroteHeader bool
}

// WriteHeader passes on an informational status every time and any other
// once, the first.
func (b *respWriter) WriteHeader(code int) {
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		b.ResponseWriter.WriteHeader(code)
	} else if !b.wroteHeader {
		b.code = code
		b.wroteHeader = true
		b.ResponseWriter.WriteHeader(code)
	}
}

// Write writes the status (200) first when none was written.
func (b *respWriter) Write(buf []byte) (int, error) {
	b.maybeWriteHeader()
	n, err := b.ResponseWriter.Write(buf)
	b.bytes += n
	return n, err
}

func (b *respWriter) maybeWriteHeader() {
	if !b.wroteHeader {
		b.WriteHeader(http.StatusOK)
	}
}

// Flush writes the status (200) first when none was written.
func (b *respWriter) Flush() {
	b.maybeWriteHeader()
	b.ResponseWriter.(http.Flusher).Flush()
}

// Hijack is the writer's.
func (b *respWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return b.ResponseWriter.(http.Hijacker).Hijack()
}

// ReadFrom writes the status (200) first when none was written.
func (b *respWriter) ReadFrom(r io.Reader) (int64, error) {
	b.maybeWriteHeader()
	n, err := b.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
	b.bytes += int(n)
	return n, err
}

// Status is the status written, 0 before one is.
func (b *respWriter) Status() int { return b.code }

// BytesWritten counts the body's bytes written.
func (b *respWriter) BytesWritten() int { return b.bytes }

// Unwrap returns the writer (http.ResponseController).
func (b *respWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

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
