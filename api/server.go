package api

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/api/encode"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
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
	// Logger receives request logs.
	Logger *slog.Logger
}

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
	r.Use(middleware.RequestID, s.recoverer)
	r.Get("/livez", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !eng.Ready() {
			w.Header().Set("Retry-After", RetryAfterSeconds)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "starting"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	r.Route(AutoPrefix+"/{org}/{project}/{type}/{schema}/{table}", func(r chi.Router) {
		r.Use(s.authenticate)
		r.Get("/", s.read)
		r.Post("/", s.write)
		r.Put("/", s.write)
		r.Delete("/", s.write)
	})
	r.With(s.authenticate).Post(TokensPath, s.mintToken)
	r.With(s.authenticate).Get(AdminSessionsPath+"/{id}/journal", s.sessionJournal)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, fault.New(fault.NotFound, "no route for %s", r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: errorDetail{Code: "METHOD_NOT_ALLOWED", Message: r.Method + " is not allowed here", RequestID: middleware.GetReqID(r.Context())}})
	})
	return r
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
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) {
	format, err := encode.ParseFormat(r.URL.Query().Get(query.ParamFormat))
	if err != nil {
		writeError(w, r, err)
		return
	}
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
	defer res.Rows.Close()
	w.Header().Set("Content-Type", format.ContentType())
	w.WriteHeader(http.StatusOK)
	page := &encode.Page{Number: plan.Offset / plan.Limit, Size: plan.Limit}
	if _, err := encode.Stream(w, format, res.Rows, page); err != nil {
		// The status is sent; abort the response so the client sees a
		// truncated transfer rather than a complete-looking document.
		s.log.Warn("read stream aborted", "err", err, "request_id", middleware.GetReqID(r.Context()))
		panic(http.ErrAbortHandler)
	}
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
	buf := encode.AppendWriteResult(make([]byte, 0, 256), res.RowsAffected, res.Columns, res.Returned)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(buf, '\n'))
}
