package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"

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
		cfg.MaxBodyBytes = 10 << 20
	}
	if cfg.MaxPageSize == 0 {
		cfg.MaxPageSize = 10000
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
		r.Post("/", s.insert)
		r.Put("/", s.update)
		r.Delete("/", s.delete)
	})
	r.With(s.authenticate).Post(TokensPath, s.mintToken)
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

// planFor builds the request part of a plan from the path and query string.
func (s *Server) planFor(r *http.Request, action query.Action) (*query.Plan, error) {
	p, err := query.FromParams(action, r.URL.Query(), query.Limits{MaxPageSize: s.cfg.MaxPageSize})
	if err != nil {
		return nil, err
	}
	p.Org = chi.URLParam(r, "org")
	p.Project = chi.URLParam(r, "project")
	p.Type = chi.URLParam(r, "type")
	p.Schema = chi.URLParam(r, "schema")
	p.Table = chi.URLParam(r, "table")
	return p, nil
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) {
	format, err := encode.ParseFormat(r.URL.Query().Get(query.ParamFormat))
	if err != nil {
		writeError(w, r, err)
		return
	}
	plan, err := s.planFor(r, query.Read)
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

// decodeBody reads a JSON body with numbers kept exact. An empty body is
// nil when allowEmpty, an error otherwise.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, allowEmpty bool) (any, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fault.New(fault.TooLarge, "request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
		}
		return nil, fault.Wrap(fault.Invalid, err, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil, nil
		}
		return nil, fault.New(fault.Invalid, "request body is empty: send JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fault.New(fault.Invalid, "request body is not valid JSON: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, fault.New(fault.Invalid, "request body holds more than one JSON value")
	}
	return v, nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error() + " at byte " + strconv.FormatInt(se.Offset, 10)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return "malformed input"
}

func (s *Server) insert(w http.ResponseWriter, r *http.Request) {
	plan, err := s.planFor(r, query.Insert)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := s.decodeBody(w, r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch b := body.(type) {
	case map[string]any:
		plan.Records = []map[string]any{b}
	case []any:
		if len(b) == 0 {
			writeError(w, r, fault.New(fault.Invalid, "request body is an empty array: send at least one row"))
			return
		}
		plan.Records = make([]map[string]any, len(b))
		for i, row := range b {
			m, ok := row.(map[string]any)
			if !ok {
				writeError(w, r, fault.New(fault.Invalid, "row %d of the request body is not a JSON object", i))
				return
			}
			plan.Records[i] = m
		}
	default:
		writeError(w, r, fault.New(fault.Invalid, "request body must be a JSON object or an array of objects"))
		return
	}
	res, err := s.eng.Execute(r.Context(), auth.PrincipalFrom(r.Context()), plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeWrite(w, http.StatusCreated, res)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	plan, err := s.planFor(r, query.Update)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := s.decodeBody(w, r, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if body != nil {
		m, ok := body.(map[string]any)
		if !ok {
			writeError(w, r, fault.New(fault.Invalid, "update body must be a JSON object of new values"))
			return
		}
		for _, k := range sortedKeys(m) {
			plan.Set = append(plan.Set, query.Assign{Column: k, Value: m[k]})
		}
	}
	res, err := s.eng.Execute(r.Context(), auth.PrincipalFrom(r.Context()), plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeWrite(w, http.StatusOK, res)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	plan, err := s.planFor(r, query.Delete)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.eng.Execute(r.Context(), auth.PrincipalFrom(r.Context()), plan)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeWrite(w, http.StatusOK, res)
}

// writeWrite answers a write: rows_affected and, for inserts, the rows.
func (s *Server) writeWrite(w http.ResponseWriter, status int, res *engine.Result) {
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"rows_affected":`...)
	buf = encode.AppendJSONValue(buf, res.RowsAffected)
	if res.Action == query.Insert && res.Returned != nil {
		buf = append(buf, `,"data":[`...)
		for i, row := range res.Returned {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '{')
			for j, c := range res.Columns {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = encode.AppendJSONValue(buf, c.Name)
				buf = append(buf, ':')
				buf = encode.AppendJSONValue(buf, row[j])
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	buf = append(buf, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
