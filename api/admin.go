package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// AdminPrefix is the root of the admin API. Every route under it needs
// the admin role of the org (or the server key); see docs/admin-api.md.
const AdminPrefix = "/minimal/api/admin/v1"

// Server key: the operator's credential for what no org admin may do
// (create and delete orgs, hand out mini-app directories) and for acting
// on any org.
const (
	// EnvServerKey names the environment variable read by `serve`; unset
	// (or shorter than MinServerKeyLen) disables the server key, and with
	// it org creation through the API.
	EnvServerKey = "MINIMAL_SERVER_KEY"
	// ServerKeyHeader carries the server key on a request.
	ServerKeyHeader = "LB-Server-Key"
	// MinServerKeyLen is the shortest server key accepted, in bytes.
	MinServerKeyLen = 16
)

// Routes of the admin API, shared by the router and the OpenAPI document.
const (
	adminOrgs     = AdminPrefix + "/orgs"
	adminOrg      = adminOrgs + "/{org}"
	adminProjects = adminOrg + "/projects"
	adminProject  = adminProjects + "/{project}"
)

// admin serves the admin API for a Server.
type admin struct {
	s *Server
	// keyDigest is SHA-256 of the server key, compared in constant time;
	// keyOn is false when no usable key is configured.
	keyDigest [sha256.Size]byte
	keyOn     bool
}

// caller is who passed the admin guard: the operator (server key) or an
// org admin (token with the admin role).
type caller struct {
	operator bool
	p        *auth.Principal
}

type callerKey struct{}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// mountAdmin adds the admin API and the OpenAPI document that describes
// the whole REST surface to the router. The server key comes from
// EnvServerKey.
func (s *Server) mountAdmin(r chi.Router) {
	a := &admin{s: s}
	switch key := os.Getenv(EnvServerKey); {
	case key == "":
	case len(key) < MinServerKeyLen:
		s.log.Error("server key disabled: "+EnvServerKey+" is too short", "min_bytes", MinServerKeyLen)
	default:
		a.keyDigest, a.keyOn = sha256.Sum256([]byte(key)), true
	}

	r.Get(OpenAPIPath, serveOpenAPI)
	// Creating an org is a route of its own, behind the server key.
	orgs := a.orgs()
	r.With(a.orgCreationEnabled, a.guard, operatorOnly("creating an org")).Post(adminOrgs, orgs.serveCreate)
	orgs.create = nil
	r.Group(func(r chi.Router) {
		r.Use(a.guard)
		orgs.mount(r, adminOrgs, adminOrg, http.MethodPatch)
		a.projects().mount(r, adminProjects, adminProject, http.MethodPatch)
		a.spaces().mount(r, adminProject+"/spaces", adminProject+"/spaces/{space}", http.MethodPatch)

		a.identities().mount(r, adminProject+"/identities", adminProject+"/identities/{identity}", http.MethodPatch)
		r.Post(adminProject+"/identities/{identity}/tokens", a.mintFor)

		r.Get(adminProject+"/roles", a.listRoles)
		r.Get(adminProject+"/roles/{role}", a.getRole)
		r.Get(adminProject+"/audit", a.listAudit)
		r.Get(adminProject+"/explain", a.explain)

		a.databases().mount(r, adminProject+"/databases", adminProject+"/databases/{type}/{schema}", http.MethodPatch)
		r.Post(adminProject+"/databases/{type}/{schema}/test", a.testDatabase)
		r.Post(adminProject+"/databases/{type}/{schema}/reload", a.reloadDatabase)

		a.mountPolicy(r, adminProject)

		// Custom API definitions (see admin_custom.go); the uri, which may
		// hold '/', is the rest of the path.
		a.customAPIs().mount(r, adminProject+"/apis", adminProject+"/apis/{method}/{version}/*", http.MethodPut)
	})
}

// actionOfMethod is what a token's key_type must allow for an admin call:
// reading, creating, changing or deleting control-plane state.
var actionOfMethod = map[string]query.Action{
	http.MethodGet: query.Read, http.MethodHead: query.Read, http.MethodPost: query.Insert,
	http.MethodPut: query.Update, http.MethodPatch: query.Update, http.MethodDelete: query.Delete,
}

// guard admits the operator (a valid server key) or a token whose roles
// include admin and whose key_type allows the method's action. Anything
// else is refused before a handler runs: 401 without valid credentials,
// 403 naming the roles held otherwise. Tokens pass the per-identity rate
// limit, as on the other routes; the operator's key has no identity to
// limit.
func (a *admin) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get(ServerKeyHeader); key != "" {
			if !a.keyOn {
				writeError(w, r, fault.New(fault.Forbidden, "the server key is disabled on this server (set %s, at least %d bytes, when starting serve)", EnvServerKey, MinServerKeyLen))
				return
			}
			got := sha256.Sum256([]byte(key))
			if subtle.ConstantTimeCompare(got[:], a.keyDigest[:]) != 1 {
				writeError(w, r, fault.New(fault.Unauthenticated, "invalid server key"))
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, &caller{operator: true})))
			return
		}
		raw, err := auth.FromRequest(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		p, err := a.s.ver.Verify(r.Context(), raw)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if !a.s.cfg.Limiter.Admit(w, r, p.IdentityID) {
			return
		}
		act, ok := actionOfMethod[r.Method]
		if !ok {
			writeError(w, r, permissions.Refusal(p.Roles))
			return
		}
		if err := permissions.AuthorizeAdmin(p.Subject(), act); err != nil {
			writeError(w, r, err)
			return
		}
		ctx := context.WithValue(auth.WithPrincipal(r.Context(), p), callerKey{}, &caller{p: p})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// orgCreationEnabled answers 403 before any credential is looked at when
// the server has no server key: org creation through the API is off.
func (a *admin) orgCreationEnabled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.keyOn {
			writeError(w, r, fault.New(fault.Forbidden, "org creation through the API is disabled: start serve with %s (at least %d bytes) and send it in the %s header", EnvServerKey, MinServerKeyLen, ServerKeyHeader))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// needOperator refuses a call that only the server key may make.
func needOperator(r *http.Request, what string) error {
	c := callerFrom(r.Context())
	if c != nil && c.operator {
		return nil
	}
	var roles []string
	if c != nil && c.p != nil {
		roles = c.p.Roles
	}
	return fault.New(fault.Forbidden, "%s needs the server key (%s header); an org admin token cannot, got [%s]", what, ServerKeyHeader, strings.Join(roles, ", "))
}

// pathParam returns a path parameter, percent-decoded. chi routes on the
// escaped path when the request has one (an object pattern sent as
// pg%2Fpublic%2Femployees), and then hands out escaped values.
func pathParam(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if r.URL.RawPath != "" {
		if u, err := url.PathUnescape(v); err == nil {
			return u
		}
	}
	return v
}

// org resolves {org} for the caller. An org admin sees only the org of
// its token: another org answers the same 404 as a missing one.
func (a *admin) org(r *http.Request) (store.Org, error) {
	abbr := pathParam(r, "org")
	notFound := fault.New(fault.NotFound, "org %q not found", abbr)
	o, err := a.s.st.OrgByAbbr(r.Context(), abbr)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return store.Org{}, notFound
		}
		return store.Org{}, err
	}
	if c := callerFrom(r.Context()); c == nil || !c.operator && (c.p == nil || c.p.OrgID != o.ID) {
		return store.Org{}, notFound
	}
	return o, nil
}

// project resolves {org} and {project} for the caller.
func (a *admin) project(r *http.Request) (store.Org, store.Project, error) {
	o, err := a.org(r)
	if err != nil {
		return store.Org{}, store.Project{}, err
	}
	p, err := a.projectIn(r, o)
	if err != nil {
		return store.Org{}, store.Project{}, err
	}
	return o, p, nil
}

// projectIn resolves {project} in the org o.
func (a *admin) projectIn(r *http.Request, o store.Org) (store.Project, error) {
	abbr := pathParam(r, "project")
	p, err := a.s.st.ProjectByAbbr(r.Context(), o.ID, abbr)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return store.Project{}, fault.New(fault.NotFound, "project %q not found in org %q", abbr, o.Abbr)
		}
		return store.Project{}, err
	}
	return p, nil
}

// listOf is the answer of every admin listing.
type listOf[T any] struct {
	Data []T `json:"data"`
}

func writeList[T any](w http.ResponseWriter, items []T) {
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, listOf[T]{Data: items})
}

// decodeStrict decodes a JSON object body into dst, a pointer to a struct
// with json tags. Unknown fields, at any depth, and values of the wrong
// JSON type are fault.Invalid naming the field; a null is the same as an
// absent field.
func (a *admin) decodeStrict(w http.ResponseWriter, r *http.Request, dst any) error {
	return a.decode(w, r, dst, false)
}

// decodeOptional is decodeStrict for a body that may be left out: an
// empty body leaves dst as it is.
func (a *admin) decodeOptional(w http.ResponseWriter, r *http.Request, dst any) error {
	return a.decode(w, r, dst, true)
}

func (a *admin) decode(w http.ResponseWriter, r *http.Request, dst any, optional bool) error {
	v, err := decodeBody(w, r, a.s.cfg.MaxBodyBytes, optional)
	if err != nil {
		return err
	}
	if v == nil && optional {
		return nil
	}
	if _, ok := v.(map[string]any); !ok {
		return fault.New(fault.Invalid, "request body must be a JSON object")
	}
	if err := checkFields("", v, reflect.TypeOf(dst)); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "re-encode request body")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		// checkFields has matched every type, so what is left is a
		// number out of range.
		return fault.Wrap(fault.Invalid, err, "request body has a value out of range")
	}
	return nil
}

// checkFields matches a decoded JSON value against the Go type it will be
// decoded into, naming the first unknown field or mismatched value.
func checkFields(path string, v any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	bad := func(want string) error {
		return fault.New(fault.Invalid, "field %q must be %s", path, want)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		fields := map[string]reflect.Type{}
		var allowed []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			allowed = append(allowed, name)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if !ok {
				return fault.New(fault.Invalid, "unknown field %q (allowed: %s)", sub, strings.Join(allowed, ", "))
			}
			if err := checkFields(sub, m[k], ft); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		for i, x := range arr {
			if err := checkFields(fmt.Sprintf("%s[%d]", path, i), x, t.Elem()); err != nil {
				return err
			}
		}
	case reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			return bad("an object")
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			return bad("an integer")
		}
	case reflect.Float64, reflect.Float32:
		n, ok := v.(json.Number)
		if _, err := n.Float64(); !ok || err != nil {
			return bad("a number")
		}
	}
	return nil
}

// required refuses an empty required string field.
func required(field, v string) error {
	if v == "" {
		return fault.New(fault.Invalid, "field %q is required", field)
	}
	return nil
}

// fieldErr prefixes a caller-safe message with the field it concerns,
// keeping the kind of err.
func fieldErr(field string, err error) error {
	fe := fault.As(err)
	return &fault.Error{Kind: fe.Kind, Message: fmt.Sprintf("field %q: %s", field, fe.Message), Err: err}
}

// noContent answers a successful delete.
func noContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }
