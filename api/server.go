package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
	"github.com/littlebitlabs/minimal/wire"
)

// AutoPrefix is the root of the Auto API.
const AutoPrefix = "/minimal/api/rest/auto/v1"

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 10 << 20
	DefaultMaxPageSize  = 10000
)

// Config bounds what a request may ask for.
type Config struct {
	// MaxBodyBytes caps a request body (default 10 MiB); over it → 413.
	MaxBodyBytes int64
	// MaxPageSize caps ps (default 10000).
	MaxPageSize int64
	// BodyTimeout is the time a request gets to send its body, from the
	// end of its headers (observe.DefaultBodyTimeout when 0); past it →
	// 408 and the connection is closed. An answer sent before the body is
	// read (a refusal of the credentials) closes the connection without
	// reading the body (observe.BodyDeadline).
	BodyTimeout time.Duration
	// Logger receives request logs.
	Logger *slog.Logger
	// Metrics, when set, counts every request and is served at MetricsPath,
	// with the pools of the engine and the live AI sessions of the store.
	// MetricsPath answers without a token.
	Metrics *observe.Metrics
	// MetricsTenantLabels names each database pool in the metrics by
	// "org/project/type/schema"; without it, by the registration's id, so
	// that an anonymous scrape learns no org or project name.
	MetricsTenantLabels bool
	// Limiter, when set, rate-limits each authenticated identity (429).
	Limiter *observe.Limiter
	// SessionsMaxAge is how long a count of live AI sessions is reused by
	// the metrics (15 s when 0; every scrape when negative).
	SessionsMaxAge time.Duration
	// DBAllow, when set, lists the database hosts and networks an org
	// admin may register (403 for any other); the operator is not limited.
	DBAllow *dialects.HostList
	// CORSOrigins lists the origins browser applications may call from
	// (ParseCORSOrigins); empty turns CORS off.
	CORSOrigins []string
}

// Health and metrics endpoints of the REST listener.
const (
	LivezPath   = "/livez"
	ReadyzPath  = "/readyz"
	MetricsPath = "/metrics"
)

// readyTimeout bounds the store check of /readyz.
const readyTimeout = 2 * time.Second

// Server is the REST face.
type Server struct {
	eng *engine.Engine
	ver *auth.Verifier
	st  *store.Store
	key []byte
	cfg Config
	log *slog.Logger
}

// Deps are what the REST face talks to.
type Deps struct {
	Engine   *engine.Engine
	Verifier *auth.Verifier
	Store    *store.Store
	// SigningKey signs tokens minted through the tokens endpoint.
	SigningKey []byte
}

// New builds the REST handler.
func New(d Deps, cfg Config) http.Handler {
	eng, ver := d.Engine, d.Verifier
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxPageSize == 0 {
		cfg.MaxPageSize = DefaultMaxPageSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{eng: eng, ver: ver, st: d.Store, key: d.SigningKey, cfg: cfg, log: cfg.Logger}
	r := chi.NewRouter()
	// observe.Front is observe.Middleware in front of the router, chi's
	// route context in the request's one context value.
	r.Use(observe.BodyDeadline(cfg.BodyTimeout), s.recoverer)
	if len(cfg.CORSOrigins) > 0 {
		r.Use(cors(cfg.CORSOrigins))
	}
	// Last, in front of the routes: a table's reads and writes.
	r.Use(s.tables)
	r.Get(LivezPath, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get(ReadyzPath, s.readyz)
	if cfg.Metrics != nil {
		r.Method(http.MethodGet, MetricsPath, cfg.Metrics.Handler())
		cfg.Metrics.WatchPools(func() []observe.Pool { return pools(eng, cfg.MetricsTenantLabels) })
		if d.Store != nil {
			cfg.Metrics.WatchSessions(func(ctx context.Context) (int64, error) {
				return d.Store.LiveSessions(ctx, time.Now())
			}, cfg.SessionsMaxAge)
		}
	}
	// The road of what tables does not take: the description, other
	// methods (405) and paths (404), escaped paths.
	r.Route(tablePattern, func(r chi.Router) {
		r.Use(s.authenticate)
		r.Get("/", s.read)
		r.Post("/", s.write)
		r.Put("/", s.write)
		r.Patch("/", s.write)
		r.Delete("/", s.write)
		r.Get("/"+DescribeSegment, s.describe)
	})
	r.Route(AutoPrefix+"/{org}/{project}", s.discoveryRoutes)
	r.Route(CustomPrefix+"/{org}/{project}", s.customRoutes)
	r.With(s.authenticate).Post(TokensPath, s.mintToken)
	r.With(s.authenticate).Get(AdminSessionsPath, s.listSessions)
	r.With(s.authenticate).Get(AdminSessionsPath+"/{id}/journal", s.sessionJournal)
	s.mountAdmin(r)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, fault.New(fault.NotFound, "no route for %s", r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		wire.WriteEnvelope(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", r.Method+" is not allowed here", middleware.GetReqID(r.Context()))
	})
	return observe.Front(observe.FaceREST, cfg.Metrics, cfg.Logger, r)
}

// tablePattern is the route of a table's reads and writes.
const tablePattern = AutoPrefix + "/{org}/{project}/{type}/{schema}/{table}"

// tableParams are tablePattern's parameters, in order.
var tableParams = [5]string{"org", "project", "type", "schema", "table"}

// tables serves the requests of the Auto API's reads and writes (GET,
// POST, PUT, PATCH and DELETE on tablePattern) as the router would through
// the table's sub-router — authenticate, then read or write, with the
// table's parameters and tablePattern in the route context, so the request
// line, metrics and span name the same route — but without routing them
// twice through a mount. Nor does it set the request's path values
// (Request.SetPathValue, a map of the request's own that chi fills on
// each of the two routings): handlers read a table's address from the
// path, and the others' parameters with chi.URLParam. Any other request
// goes on to the router: the description, any other method or shape of
// path, and an escaped path, which chi routes on its escaped form.
func (s *Server) tables(next http.Handler) http.Handler {
	read := s.authenticate(http.HandlerFunc(s.read))
	write := s.authenticate(http.HandlerFunc(s.write))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h http.Handler
		switch r.Method {
		case http.MethodGet:
			h = read
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			h = write
		}
		var segs [5]string
		rc := chi.RouteContext(r.Context())
		if h == nil || rc == nil || rc.RoutePath != "" || r.URL.RawPath != "" || !tableAddress(r.URL.Path, &segs) {
			next.ServeHTTP(w, r)
			return
		}
		for i, k := range tableParams {
			rc.URLParams.Add(k, segs[i])
		}
		rc.RoutePatterns = append(rc.RoutePatterns, tablePattern)
		r.Pattern = tablePattern
		h.ServeHTTP(w, r)
	})
}

// tableAddress splits a path of tablePattern's shape — AutoPrefix and five
// segments, none empty, no trailing slash — into segs, and reports whether
// path has that shape.
func tableAddress(path string, segs *[5]string) bool {
	rest, ok := strings.CutPrefix(path, AutoPrefix+"/")
	if !ok || !splitAddress(rest, segs) {
		return false
	}
	for _, s := range segs {
		if s == "" {
			return false
		}
	}
	return true
}

// readyz answers 200 only when this process can serve: the catalog has been
// loaded and the control-plane store answers now. A registered database
// being down does not make the process unready (every replica would leave
// the load balancer for one team's outage); its calls answer 503 instead.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	status, code := "ready", http.StatusOK
	switch {
	case !s.eng.Ready():
		status, code = "starting: the catalog is not loaded", http.StatusServiceUnavailable
	case s.st != nil:
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if _, err := s.st.ChangeSeq(ctx); err != nil {
			s.log.WarnContext(ctx, "readyz: control-plane store does not answer", "err", err)
			status, code = "unavailable: the control-plane store does not answer", http.StatusServiceUnavailable
		}
	}
	if code != http.StatusOK {
		w.Header().Set("Retry-After", wire.RetryAfterSeconds)
	}
	writeJSON(w, code, map[string]string{"status": status})
}

// pools converts the engine's pool report for the metrics: each pool named
// by its registration's id, or by "org/project/type/schema" when names
// (Config.MetricsTenantLabels).
func pools(eng *engine.Engine, names bool) []observe.Pool {
	ps := eng.Pools()
	out := make([]observe.Pool, len(ps))
	for i, p := range ps {
		db := p.ID
		if names {
			db = p.Database
		}
		out[i] = observe.Pool{
			Database: db, Max: p.MaxConns, Idle: p.Idle, Acquired: p.Acquired, Constructing: p.Constructing,
			Acquires: p.Acquires, EmptyAcquires: p.EmptyAcquires, CanceledAcquires: p.CanceledAcquires, AcquireWait: p.AcquireWait,
		}
	}
	return out
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "panic", v, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()))
				writeError(w, r, fault.New(fault.Internal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := auth.FromRequest(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		p, err := s.ver.Verify(r.Context(), raw)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if !s.cfg.Limiter.Admit(w, r, p.IdentityID) {
			return
		}
		// The request's context keeps the principal itself when it can:
		// no context and request copy of their own.
		if observe.Attach(r.Context(), auth.PrincipalKey(), p) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) {
	format, err := wire.ParseFormat(query.FirstValue(r.URL.RawQuery, query.ParamFormat))
	if err != nil {
		writeError(w, r, err)
		return
	}
	plan, err := PlanFromRequest(w, r, s.cfg)
	if err != nil {
		writeError(w, r, err)
		return
	}
	total, err := s.count(r, plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.eng.Execute(r.Context(), auth.PrincipalFrom(r.Context()), plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer res.Rows.Close()
	w.Header()["Content-Type"] = contentTypeValue(format) // canonical already: no Set to canonicalize it
	page := &wire.Page{Number: plan.Offset / plan.Limit, Size: plan.Limit, Total: total}
	if total != nil {
		w.Header().Set("Content-Range", contentRange(plan.Offset, plan.Limit, *total))
	}
	// The status (200) goes with the first bytes of the answer: a
	// database that fails before then (a page is written once it is
	// whole, a bigger answer every 32 KiB) still gets its error answered.
	if _, err := wire.Stream(w, format, res.Rows, page); err != nil {
		if sw, ok := w.(interface{ Status() int }); ok && sw.Status() == 0 {
			h := w.Header()
			h.Del("Content-Type")
			h.Del("Content-Range")
			writeError(w, r, err)
			return
		}
		// The status is sent; abort the response so the client sees a
		// truncated transfer rather than a complete-looking document.
		s.log.Warn("read stream aborted", "err", err, "request_id", middleware.GetReqID(r.Context()))
		panic(http.ErrAbortHandler)
	}
}

// contentTypes holds the Content-Type header's value slice of each read
// format, shared by every answer: net/http copies a handler's headers
// before it writes them, and nothing here changes a value in place.
var contentTypes = func() map[wire.Format][]string {
	m := make(map[wire.Format][]string)
	for _, f := range []wire.Format{"", wire.JSON, wire.NDJSON, wire.CSV, wire.XML, wire.YAML, wire.BSON} {
		m[f] = []string{f.ContentType()}
	}
	return m
}()

// contentTypeValue is the Content-Type header's value slice of an answer
// in format f, as Header.Set(f.ContentType()) would make it. Its length is
// its capacity: an Add makes a new one.
func contentTypeValue(f wire.Format) []string {
	if v, ok := contentTypes[f]; ok {
		return v[:1:1]
	}
	return []string{f.ContentType()}
}

// write handles POST, PUT and DELETE: build the plan, execute, answer.
func (s *Server) write(w http.ResponseWriter, r *http.Request) {
	plan, err := PlanFromRequest(w, r, s.cfg)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.eng.Execute(r.Context(), auth.PrincipalFrom(r.Context()), plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if plan.Action == query.Insert {
		status = http.StatusCreated
	}
	s.writeWrite(w, status, res)
}

// writeWrite answers a write: rows_affected and, for inserts, the rows.
func (s *Server) writeWrite(w http.ResponseWriter, status int, res *engine.Result) {
	buf := wire.AppendWriteResult(make([]byte, 0, 256), res.RowsAffected, res.Columns, res.Returned)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(buf, '\n'))
}
