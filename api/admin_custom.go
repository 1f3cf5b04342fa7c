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

// customKey reads {method}, {version} and the uri (the rest of the path).
func customKey(r *http.Request) (uri, method string, version int, err error) {
	method = strings.ToUpper(pathParam(r, "method"))
	version, err = strconv.Atoi(pathParam(r, "version"))
	if err != nil || version < 1 {
		return "", "", 0, fault.New(fault.Invalid, "version %q in the path must be an integer, 1 or more", pathParam(r, "version"))
	}
	return strings.Trim(pathParam(r, "*"), "/"), method, version, nil
}

func (a *admin) listCustomAPIs(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defs, err := a.s.st.CustomAPIs(r.Context(), p.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]customAPIJSON, len(defs))
	for i, d := range defs {
		out[i] = customOut(d)
	}
	writeList(w, out)
}

func (a *admin) createCustomAPI(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b customAPIBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case b.URI == nil:
		err = required("uri", "")
	case b.Method == nil:
		err = required("method", "")
	case b.Version == nil:
		err = required("version", "")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := b.def(p.ID, *b.URI, *b.Method, *b.Version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if d, err = a.s.st.CreateCustomAPI(r.Context(), d); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, customOut(d))
}

func (a *admin) getCustomAPI(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	uri, method, version, err := customKey(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := a.s.st.CustomAPI(r.Context(), p.ID, uri, method, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, customOut(d))
}

// putCustomAPI replaces a definition; its key (uri, method, version) and
// id stay.
func (a *admin) putCustomAPI(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	uri, method, version, err := customKey(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b customAPIBody
	if err := a.decodeStrict(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case b.URI != nil && strings.Trim(*b.URI, "/") != uri:
		err = fault.New(fault.Invalid, "field \"uri\" is %q but the path names %q", *b.URI, uri)
	case b.Method != nil && strings.ToUpper(*b.Method) != method:
		err = fault.New(fault.Invalid, "field \"method\" is %q but the path names %q", *b.Method, method)
	case b.Version != nil && *b.Version != version:
		err = fault.New(fault.Invalid, "field \"version\" is %d but the path names %d", *b.Version, version)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := b.def(p.ID, uri, method, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if d, err = a.s.st.UpdateCustomAPI(r.Context(), d); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, customOut(d))
}

func (a *admin) deleteCustomAPI(w http.ResponseWriter, r *http.Request) {
	_, p, err := a.project(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	uri, method, version, err := customKey(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := a.s.st.DeleteCustomAPI(r.Context(), p.ID, uri, method, version); err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}
