package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// CustomAPI declares a custom API (see package custom and
// docs/custom-apis.md). (URI, Method, Version) identifies it; exactly one
// of SQL (one statement) and Statements (a write's ordered list, run in one
// transaction) is given.
type CustomAPI struct {
	URI     string `yaml:"uri"`
	Method  string `yaml:"method"`
	Version int    `yaml:"version"`
	// Type and Schema name the registered database it runs on.
	Type   string `yaml:"type"`
	Schema string `yaml:"schema"`
	// Mode is read or write.
	Mode        string `yaml:"mode"`
	Description string `yaml:"description,omitempty"`
	// Roles may call it (admin always may).
	Roles []string `yaml:"roles,flow"`
	// Tables the statements read, so that locks on them apply.
	Tables     []string      `yaml:"tables,omitempty,flow"`
	Params     []CustomParam `yaml:"params,omitempty"`
	SQL        string        `yaml:"sql,omitempty"`
	Statements []string      `yaml:"statements,omitempty"`

	line int
}

// CustomParam declares a typed parameter of a custom API. Default is in
// text form (YAML `default: 10` reads as "10").
type CustomParam struct {
	Name      string   `yaml:"name"`
	Type      string   `yaml:"type"`
	Required  bool     `yaml:"required,omitempty"`
	Default   *string  `yaml:"default,omitempty"`
	MaxLength *int     `yaml:"max_length,omitempty"`
	Min       *float64 `yaml:"min,omitempty"`
	Max       *float64 `yaml:"max,omitempty"`
}

// def is the definition the file declares, as the store keeps it; the
// method is upper-cased.
func (c CustomAPI) def() store.CustomAPI {
	d := store.CustomAPI{URI: c.URI, Method: strings.ToUpper(c.Method), Version: c.Version, Type: c.Type, Schema: c.Schema,
		Mode: c.Mode, Description: c.Description, Roles: slices.Clone(c.Roles), Tables: slices.Clone(c.Tables),
		Params: make([]store.CustomParam, len(c.Params)), Statements: slices.Clone(c.Statements)}
	for i, p := range c.Params {
		d.Params[i] = store.CustomParam(p)
	}
	if c.SQL != "" {
		d.Statements = []string{c.SQL}
	}
	return canonCustom(d)
}

// canonCustom clears what the store assigns and makes empty lists non-nil,
// so definitions compare equal whatever their origin.
func canonCustom(d store.CustomAPI) store.CustomAPI {
	d.ID, d.ProjectID = "", ""
	d.CreatedAt, d.UpdatedAt = time.Time{}, time.Time{}
	if d.Roles == nil {
		d.Roles = []string{}
	}
	if d.Tables == nil {
		d.Tables = []string{}
	}
	if d.Params == nil {
		d.Params = []store.CustomParam{}
	}
	if d.Statements == nil {
		d.Statements = []string{}
	}
	return d
}

// fromDef is the file's form of a stored definition.
func fromDef(d store.CustomAPI) CustomAPI {
	c := CustomAPI{URI: d.URI, Method: d.Method, Version: d.Version, Type: d.Type, Schema: d.Schema, Mode: d.Mode,
		Description: d.Description, Roles: d.Roles}
	if len(d.Tables) > 0 {
		c.Tables = d.Tables
	}
	for _, p := range d.Params {
		c.Params = append(c.Params, CustomParam(p))
	}
	if len(d.Statements) == 1 {
		c.SQL = d.Statements[0]
	} else {
		c.Statements = d.Statements
	}
	return c
}

// checkCustomAPIs validates the custom_apis section: exactly one of sql and
// statements, every rule of custom.Check, no (uri, method, version) twice.
func (f *File) checkCustomAPIs(p *problems) {
	seen := make(map[string]bool, len(f.CustomAPIs))
	for i, c := range f.CustomAPIs {
		d := c.def()
		what := item("custom API", strings.TrimSpace(fmt.Sprintf("%s %s", d.Method, d.URI)), i)
		switch {
		case c.SQL != "" && len(c.Statements) > 0:
			p.add(c.line, "%s: give sql or statements, not both", what)
			continue
		case c.SQL == "" && len(c.Statements) == 0:
			p.add(c.line, "%s: sql (or statements) is required", what)
			continue
		case c.Version == 0:
			p.add(c.line, "%s: version is required (1 or more)", what)
			continue
		}
		if err := custom.Check(d); err != nil {
			p.add(c.line, "%s", fault.As(err).Message)
			continue
		}
		if seen[d.Key()] {
			p.add(c.line, "custom API %s is declared twice", d.Key())
		}
		seen[d.Key()] = true
	}
}

// planCustomAPIs compares the section, when present, with the store's
// definitions and notes what Apply must write.
func (p *plan) planCustomAPIs(f *File, current []store.CustomAPI) {
	if f.CustomAPIs == nil {
		return
	}
	p.customAPIs = make([]store.CustomAPI, 0, len(f.CustomAPIs))
	for _, c := range f.CustomAPIs {
		p.customAPIs = append(p.customAPIs, c.def())
	}
	store.SortCustomAPIs(p.customAPIs)
	cur := make(map[string]store.CustomAPI, len(current))
	for _, d := range current {
		cur[d.Key()] = canonCustom(d)
	}
	want := make(map[string]store.CustomAPI, len(p.customAPIs))
	for _, d := range p.customAPIs {
		want[d.Key()] = d
	}
	n := len(p.changes)
	for _, key := range union(cur, want) {
		c, inCur := cur[key]
		w, inWant := want[key]
		switch {
		case !inCur:
			p.add(Add, "custom_api", key, "(%s on %s/%s, roles %v)", w.Mode, w.Type, w.Schema, w.Roles)
		case !inWant:
			p.add(Remove, "custom_api", key, "(%s on %s/%s)", c.Mode, c.Type, c.Schema)
		default:
			p.diffCustomAPI(key, c, w)
		}
	}
	p.customChanged = len(p.changes) > n
}

// diffCustomAPI adds one line per field that differs.
func (p *plan) diffCustomAPI(key string, c, w store.CustomAPI) {
	field := func(name string, from, to any) {
		if !reflect.DeepEqual(from, to) {
			p.add(Modify, "custom_api", key, "%s %v -> %v", name, from, to)
		}
	}
	field("database", c.Type+"/"+c.Schema, w.Type+"/"+w.Schema)
	field("mode", c.Mode, w.Mode)
	field("roles", c.Roles, w.Roles)
	field("tables", c.Tables, w.Tables)
	if c.Description != w.Description {
		p.add(Modify, "custom_api", key, "description changed")
	}
	if !reflect.DeepEqual(c.Params, w.Params) {
		p.add(Modify, "custom_api", key, "params changed")
	}
	if !reflect.DeepEqual(c.Statements, w.Statements) {
		p.add(Modify, "custom_api", key, "statements changed")
	}
}

// customAPILines records the line of every custom API, for messages.
func (f *File) customAPILines(top *yaml.Node) {
	if v := lookup(top, "custom_apis"); v != nil && v.Kind == yaml.SequenceNode {
		for i, n := range v.Content {
			if i < len(f.CustomAPIs) {
				f.CustomAPIs[i].line = n.Line
			}
		}
	}
}

// customAPIsText renders the section for `minimal policy show`.
func (f *File) customAPIsText(b *strings.Builder) {
	for _, c := range f.CustomAPIs {
		d := c.def()
		fmt.Fprintf(b, "custom_api %s (%s on %s/%s, roles %v", d.Key(), d.Mode, d.Type, d.Schema, d.Roles)
		if len(d.Params) > 0 {
			names := make([]string, len(d.Params))
			for i, prm := range d.Params {
				names[i] = prm.Name + " " + prm.Type
			}
			fmt.Fprintf(b, ", params [%s]", strings.Join(names, ", "))
		}
		fmt.Fprintf(b, ", %s)\n", plural(len(d.Statements), "statement"))
	}
}

// flowParams writes each parameter of the custom_apis section as one flow
// mapping, as the documentation lays them out, and SQL of several lines as
// a literal block.
func flowParams(root *yaml.Node) {
	apis := lookup(root, "custom_apis")
	if apis == nil || apis.Kind != yaml.SequenceNode {
		return
	}
	for _, a := range apis.Content {
		if ps := lookup(a, "params"); ps != nil && ps.Kind == yaml.SequenceNode {
			for _, it := range ps.Content {
				it.Style = yaml.FlowStyle
			}
		}
		texts := []*yaml.Node{lookup(a, "sql")}
		if ss := lookup(a, "statements"); ss != nil && ss.Kind == yaml.SequenceNode {
			texts = append(texts, ss.Content...)
		}
		for _, v := range texts {
			if v != nil && strings.Contains(v.Value, "\n") {
				v.Style = yaml.LiteralStyle
			}
		}
	}
}
