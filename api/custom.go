package api

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/wire"
)

// CustomPrefix is the root of the custom APIs:
// CustomPrefix/{org}/{project}/{uri}?version=N.
const CustomPrefix = "/minimal/api/rest/custom/v1"

// Query-string names a custom call reads itself; they cannot be parameter
// names.
const (
	paramVersion = "version"
	paramFormat  = query.ParamFormat
)

// customRoutes serves the custom APIs below CustomPrefix/{org}/{project}:
// GET on the project itself lists the APIs the caller may call; any of
// GET, POST, PUT, DELETE on a uri calls one.
func (s *Server) customRoutes(r chi.Router) {
	r.Use(s.authenticate)
	r.Get("/", s.listCustom)
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		r.Method(m, "/*", http.HandlerFunc(s.callCustom))
	}
}

// listCustom answers {"data":[…]}, one custom.Info per API the caller may
// call.
func (s *Server) listCustom(w http.ResponseWriter, r *http.Request) {
	defs, err := s.eng.CustomAPIs(r.Context(), auth.PrincipalFrom(r.Context()), chi.URLParam(r, "org"), chi.URLParam(r, "project"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]custom.Info, len(defs))
	for i, d := range defs {
		out[i] = custom.Describe(d)
	}
	writeJSON(w, http.StatusOK, struct {
		Data []custom.Info `json:"data"`
	}{out})
}

// callCustom decodes a call — uri from the path, version (and format) from
// the query string, parameters from the query string (GET, DELETE) or the
// JSON body (POST, PUT) — runs it and answers like the Auto API: a read's
// rows as {"data":[…]} (or another format), a write's {"rows_affected":n}.
func (s *Server) callCustom(w http.ResponseWriter, r *http.Request) {
	uri := strings.Trim(chi.URLParam(r, "*"), "/")
	if uri == "" {
		if r.Method == http.MethodGet {
			s.listCustom(w, r)
			return
		}
		writeError(w, r, fault.New(fault.NotFound, "no route for %s %s: name a custom API's uri", r.Method, r.URL.Path))
		return
	}
	call, format, err := customCallFromRequest(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		writeError(w, r, err)
		return
	}
	call.Org, call.Project, call.URI = chi.URLParam(r, "org"), chi.URLParam(r, "project"), uri
	res, err := s.eng.CallAPI(r.Context(), auth.PrincipalFrom(r.Context()), call)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if res.Write {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(wire.AppendWriteResult(nil, res.RowsAffected, nil, nil), '\n'))
		return
	}
	defer res.Rows.Close()
	w.Header().Set("Content-Type", format.ContentType())
	w.WriteHeader(http.StatusOK)
	if _, err := wire.Stream(w, format, res.Rows, nil); err != nil {
		// The status is sent: cut the transfer rather than end it cleanly.
		s.log.Warn("custom read stream aborted", "err", err, "request_id", middleware.GetReqID(r.Context()))
		panic(http.ErrAbortHandler)
	}
}

// customCallFromRequest reads the version, the answer format and the
// parameters of a call. A query-string name given twice arrives as a list,
// which the parameter's check refuses like any non-scalar.
func customCallFromRequest(w http.ResponseWriter, r *http.Request, limit int64) (*engine.CustomCall, wire.Format, error) {
	q := r.URL.Query()
	call := &engine.CustomCall{Method: r.Method, Params: map[string]any{}}
	if vs, ok := q[paramVersion]; ok {
		v, err := strconv.Atoi(vs[0])
		if len(vs) != 1 || err != nil {
			return nil, "", fault.New(fault.Invalid, "version must be one integer, e.g. ?version=1")
		}
		call.Version = v
	}
	format, err := wire.ParseFormat(q.Get(paramFormat))
	if err != nil {
		return nil, "", err
	}
	names := make([]string, 0, len(q))
	for k := range q {
		if k != paramVersion && k != paramFormat {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	switch r.Method {
	case http.MethodPost, http.MethodPut:
		if len(names) > 0 {
			return nil, "", fault.New(fault.Invalid, "query parameter %q: a %s takes its parameters in the JSON body", names[0], r.Method)
		}
		body, err := decodeBody(w, r, limit, true)
		if err != nil {
			return nil, "", err
		}
		switch b := body.(type) {
		case nil:
		case map[string]any:
			call.Params = b
		default:
			return nil, "", fault.New(fault.Invalid, "request body must be a JSON object of parameters")
		}
	default:
		for _, k := range names {
			if vs := q[k]; len(vs) == 1 {
				call.Params[k] = vs[0]
			} else {
				list := make([]any, len(vs))
				for i, v := range vs {
					list[i] = v
				}
				call.Params[k] = list
			}
		}
	}
	return call, format, nil
}
