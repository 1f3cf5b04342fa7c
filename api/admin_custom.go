package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// Custom API definitions through the admin API: the same fields as the
// custom_apis section of a policy file, checked by custom.Check before
// the store writes them, as `minimal apply` does. A definition is
// addressed by method, version and uri: .../apis/GET/1/employees/by-dept.

// customParamJSON is a typed parameter of a custom API.
type customParamJSON struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Required  bool     `json:"required,omitempty"`
	Default   *string  `json:"default,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
}

// customAPIJSON is a definition as the admin API shows it; a read's single
// statement is sql, a write's are statements.
type customAPIJSON struct {
	ID          string            `json:"id"`
	URI         string            `json:"uri"`
	Method      string            `json:"method"`
	Version     int               `json:"version"`
	Type        string            `json:"type"`
	Schema      string            `json:"schema"`
	Mode        string            `json:"mode"`
	Description string            `json:"description"`
	Roles       []string          `json:"roles"`
	Tables      []string          `json:"tables"`
	Params      []customParamJSON `json:"params"`
	SQL         string            `json:"sql,omitempty"`
	Statements  []string          `json:"statements,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
}

func customOut(d store.CustomAPI) customAPIJSON {
	out := customAPIJSON{ID: d.ID, URI: d.URI, Method: d.Method, Version: d.Version, Type: d.Type, Schema: d.Schema,
		Mode: d.Mode, Description: d.Description, Roles: d.Roles, Tables: d.Tables,
		Params: make([]customParamJSON, len(d.Params)), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for i, p := range d.Params {
		out.Params[i] = customParamJSON(p)
	}
	if len(d.Statements) == 1 && d.Mode == store.ModeRead {
		out.SQL = d.Statements[0]
	} else {
		out.Statements = d.Statements
	}
	return out
}

// customAPIBody creates a definition (every key field required) or
// replaces one (key fields optional, equal to the path's when given).
type customAPIBody struct {
	URI         *string           `json:"uri"`
	Method      *string           `json:"method"`
	Version     *int              `json:"version"`
	Type        string            `json:"type"`
	Schema      string            `json:"schema"`
	Mode        string            `json:"mode"`
	Description string            `json:"description"`
	Roles       []string          `json:"roles"`
	Tables      []string          `json:"tables"`
	Params      []customParamJSON `json:"params"`
	SQL         string            `json:"sql"`
	Statements  []string          `json:"statements"`
}

// def builds the definition the body describes under the given key and
// checks it with custom.Check.
func (b customAPIBody) def(projectID, uri, method string, version int) (store.CustomAPI, error) {
	switch {
	case b.SQL != "" && len(b.Statements) > 0:
		return store.CustomAPI{}, fault.New(fault.Invalid, "give field \"sql\" or field \"statements\", not both")
	case b.SQL == "" && len(b.Statements) == 0:
		return store.CustomAPI{}, fault.New(fault.Invalid, "field \"sql\" (or \"statements\") is required")
	}
	d := store.CustomAPI{ProjectID: projectID, URI: uri, Method: strings.ToUpper(method), Version: version,
		Type: b.Type, Schema: b.Schema, Mode: b.Mode, Description: b.Description,
		Roles: b.Roles, Tables: b.Tables, Params: make([]store.CustomParam, len(b.Params)), Statements: b.Statements}
	for i, p := range b.Params {
		d.Params[i] = store.CustomParam(p)
	}
	if b.SQL != "" {
		d.Statements = []string{b.SQL}
	}
	if d.Roles == nil {
		d.Roles = []string{}
	}
	if d.Tables == nil {
		d.Tables = []string{}
	}
	if err := custom.Check(d); err != nil {
		return store.CustomAPI{}, err
	}
	return d, nil
}

// customRef names a custom API definition: the key of its item path.
type customRef struct {
	uri, method string
	version     int
}

// customKey reads {method}, {version} and the uri (the rest of the path).
func customKey(r *http.Request, _ store.Project) (customRef, error) {
	method := strings.ToUpper(pathParam(r, "method"))
	version, err := strconv.Atoi(pathParam(r, "version"))
	if err != nil || version < 1 {
		return customRef{}, fault.New(fault.Invalid, "version %q in the path must be an integer, 1 or more", pathParam(r, "version"))
	}
	return customRef{uri: strings.Trim(pathParam(r, "*"), "/"), method: method, version: version}, nil
}

// customAPIs serves the custom API definitions of a project, checked like
// the custom_apis section of a policy file before they are stored. An
// update (PUT) replaces a definition; its key (uri, method, version) and
// id stay.
func (a *admin) customAPIs() crud[store.Project, customRef, store.CustomAPI, customAPIBody, customAPIBody] {
	return crud[store.Project, customRef, store.CustomAPI, customAPIBody, customAPIBody]{
		a:      a,
		parent: a.projectOf,
		list: func(r *http.Request, p store.Project) ([]store.CustomAPI, error) {
			return a.s.st.CustomAPIs(r.Context(), p.ID)
		},
		at: customKey,
		get: func(r *http.Request, p store.Project, k customRef) (store.CustomAPI, error) {
			return a.s.st.CustomAPI(r.Context(), p.ID, k.uri, k.method, k.version)
		},
		create: func(r *http.Request, p store.Project, b *customAPIBody) (store.CustomAPI, error) {
			switch {
			case b.URI == nil:
				return store.CustomAPI{}, required("uri", "")
			case b.Method == nil:
				return store.CustomAPI{}, required("method", "")
			case b.Version == nil:
				return store.CustomAPI{}, required("version", "")
			}
			d, err := b.def(p.ID, *b.URI, *b.Method, *b.Version)
			if err != nil {
				return store.CustomAPI{}, err
			}
			return a.s.st.CreateCustomAPI(r.Context(), d)
		},
		update: func(r *http.Request, p store.Project, k customRef, b *customAPIBody) (store.CustomAPI, error) {
			switch {
			case b.URI != nil && strings.Trim(*b.URI, "/") != k.uri:
				return store.CustomAPI{}, fault.New(fault.Invalid, "field \"uri\" is %q but the path names %q", *b.URI, k.uri)
			case b.Method != nil && strings.ToUpper(*b.Method) != k.method:
				return store.CustomAPI{}, fault.New(fault.Invalid, "field \"method\" is %q but the path names %q", *b.Method, k.method)
			case b.Version != nil && *b.Version != k.version:
				return store.CustomAPI{}, fault.New(fault.Invalid, "field \"version\" is %d but the path names %d", *b.Version, k.version)
			}
			d, err := b.def(p.ID, k.uri, k.method, k.version)
			if err != nil {
				return store.CustomAPI{}, err
			}
			return a.s.st.UpdateCustomAPI(r.Context(), d)
		},
		remove: func(r *http.Request, p store.Project, k customRef) error {
			return a.s.st.DeleteCustomAPI(r.Context(), p.ID, k.uri, k.method, k.version)
		},
		out: func(_ store.Project, d store.CustomAPI) any { return customOut(d) },
	}
}
