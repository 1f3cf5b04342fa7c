package custom

import (
	"slices"
	"sort"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// API is a compiled custom API: its definition, typed parameters, the
// statements cut at their parameters, and the tables it touches with the
// action on each, for the permission gates.
type API struct {
	Def    store.CustomAPI
	Params []Param
	stmts  []*statement
	access []Access
}

// Access is one table an API touches and what it does to it: the action a
// write statement's verb names on its target (INSERT → create, UPDATE →
// update, DELETE → delete), read on each table the definition lists.
type Access struct {
	Table  string
	Action query.Action
}

var verbAction = map[string]query.Action{"insert": query.Insert, "update": query.Update, "delete": query.Delete}

// Check applies every rule of a definition without running anything: the
// store's shape checks (store.CheckCustomAPI), the parameters (names,
// types, defaults, bounds) and the statements (see Compile). Callers run
// it before writing a definition to the store: `minimal apply` and the
// admin API. A problem is fault.Invalid naming the definition.
func Check(def store.CustomAPI) error {
	_, err := Compile(def)
	return err
}

// Compile checks a definition and prepares it for calls:
//
//   - GET serves reads only; a write is served by POST, PUT or DELETE;
//   - a read has exactly one statement, beginning with SELECT, WITH,
//     VALUES or TABLE; each statement of a write begins with INSERT,
//     UPDATE or DELETE (no WITH: a data-modifying CTE could write a table
//     the gates do not see) and writes a table of the API's own schema;
//   - every :name is a declared parameter and every declared parameter is
//     used; a declared :name inside quotes, positional placeholders and a
//     second statement after ';' are refused (see the lexical rules in
//     sql.go).
func Compile(def store.CustomAPI) (*API, error) {
	if err := store.CheckCustomAPI(def); err != nil {
		return nil, err
	}
	fail := func(err error) (*API, error) {
		return nil, fault.New(fault.Invalid, "custom API %s: %s", def.Key(), fault.As(err).Message)
	}
	a := &API{Def: def, Params: make([]Param, 0, len(def.Params))}
	declared := make(map[string]bool, len(def.Params))
	for _, d := range def.Params {
		p, err := compileParam(d)
		if err != nil {
			return fail(err)
		}
		a.Params = append(a.Params, p)
		declared[p.Name] = true
	}
	write := def.Mode == store.ModeWrite
	switch {
	case def.Method == "GET" && write:
		return fail(fault.New(fault.Invalid, "a GET API must be mode read; serve a write with POST, PUT or DELETE"))
	case !write && len(def.Statements) != 1:
		return fail(fault.New(fault.Invalid, "a read has exactly one statement (sql), not %d", len(def.Statements)))
	}
	used := map[string]bool{}
	seen := map[Access]bool{}
	addAccess := func(x Access) {
		if !seen[x] {
			seen[x] = true
			a.access = append(a.access, x)
		}
	}
	for i, src := range def.Statements {
		st, err := parseStatement(src, declared, def.Schema)
		if err != nil {
			return fail(fault.New(fault.Invalid, "statement %d: %s", i+1, fault.As(err).Message))
		}
		action, writes := verbAction[st.verb]
		switch {
		case write && !writes:
			return fail(fault.New(fault.Invalid, "statement %d: a write statement begins with INSERT, UPDATE or DELETE, not %s", i+1, strings.ToUpper(st.verb)))
		case !write && writes:
			return fail(fault.New(fault.Invalid, "statement %d: %s in a read API: declare mode: write", i+1, strings.ToUpper(st.verb)))
		}
		if writes {
			addAccess(Access{Table: st.target, Action: action})
		}
		for _, n := range st.names {
			used[n] = true
		}
		a.stmts = append(a.stmts, st)
	}
	for _, p := range a.Params {
		if !used[p.Name] {
			return fail(fault.New(fault.Invalid, "parameter %q is declared but no statement uses :%s", p.Name, p.Name))
		}
	}
	for _, t := range def.Tables {
		addAccess(Access{Table: t, Action: query.Read})
	}
	return a, nil
}

// Write reports whether the API writes.
func (a *API) Write() bool { return a.Def.Mode == store.ModeWrite }

// Access returns the tables the API touches with the action on each: the
// targets of its write statements first, in order, then the listed tables
// (read).
func (a *API) Access() []Access { return slices.Clone(a.access) }

// Actions returns the distinct actions the API performs, in CRUD order: a
// read API's is read alone, even when it lists no table.
func (a *API) Actions() []query.Action {
	var out []query.Action
	for _, act := range []query.Action{query.Insert, query.Read, query.Update, query.Delete} {
		if act == query.Read && !a.Write() {
			out = append(out, act)
			continue
		}
		for _, x := range a.access {
			if x.Action == act {
				out = append(out, act)
				break
			}
		}
	}
	return out
}

// Bind checks a caller's values against the parameters and returns the
// value of every parameter: the caller's, coerced, or the default, or nil
// (NULL) for an optional one without a default. Problems are fault.Invalid,
// found in a fixed order so that both faces answer alike: the first unknown
// name (sorted), then each declared parameter in order (missing when
// required, wrong type, out of bounds).
func (a *API) Bind(values map[string]any) (map[string]any, error) {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.ContainsFunc(a.Params, func(p Param) bool { return p.Name == k }) {
			return nil, fault.New(fault.Invalid, "unknown parameter %q: %s takes %s", k, a.Def.Key(), a.paramList())
		}
	}
	out := make(map[string]any, len(a.Params))
	for i := range a.Params {
		p := &a.Params[i]
		v, ok := values[p.Name]
		switch {
		case ok:
			cv, err := p.Coerce(v)
			if err != nil {
				return nil, err
			}
			out[p.Name] = cv
		case p.Required:
			return nil, fault.New(fault.Invalid, "missing required parameter %q (%s)", p.Name, p.Type)
		case p.HasDefault:
			out[p.Name] = p.Default
		default:
			out[p.Name] = nil
		}
	}
	return out, nil
}

func (a *API) paramList() string {
	if len(a.Params) == 0 {
		return "no parameters"
	}
	names := make([]string, len(a.Params))
	for i, p := range a.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Statements renders the statements for one database: each :name becomes
// the placeholder of its position (placeholder(1), placeholder(2), … in
// each statement) and its value the matching argument; a name used twice
// is bound twice. vals comes from Bind. No value ever enters the SQL text.
func (a *API) Statements(placeholder func(n int) string, vals map[string]any) []dialects.Stmt {
	out := make([]dialects.Stmt, len(a.stmts))
	for i, st := range a.stmts {
		var b strings.Builder
		args := make([]any, 0, len(st.names))
		for j, name := range st.names {
			b.WriteString(st.parts[j])
			args = append(args, vals[name])
			b.WriteString(placeholder(len(args)))
		}
		b.WriteString(st.parts[len(st.names)])
		out[i] = dialects.Stmt{SQL: b.String(), Args: args}
	}
	return out
}

// Info is what a caller is told about an API it may call (listings, help).
type Info struct {
	URI         string      `json:"uri"`
	Method      string      `json:"method"`
	Version     int         `json:"version"`
	Mode        string      `json:"mode"`
	Description string      `json:"description,omitempty"`
	Params      []ParamInfo `json:"params"`
}

// ParamInfo describes a parameter to callers.
type ParamInfo struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Required  bool     `json:"required"`
	Default   *string  `json:"default,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
}

// Describe returns the caller's view of a definition: no SQL, roles,
// tables or database.
func Describe(def store.CustomAPI) Info {
	in := Info{URI: def.URI, Method: def.Method, Version: def.Version, Mode: def.Mode, Description: def.Description,
		Params: make([]ParamInfo, len(def.Params))}
	for i, p := range def.Params {
		in.Params[i] = ParamInfo{Name: p.Name, Type: p.Type, Required: p.Required, Default: p.Default,
			MaxLength: p.MaxLength, Min: p.Min, Max: p.Max}
	}
	return in
}
