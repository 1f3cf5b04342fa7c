package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Variables a scope filter may use besides {claims.NAME}.
var filterVars = map[string]bool{"identity": true, "space": true, "org": true, "project": true}

// problems collects validation messages, each prefixed with its line when
// the file was loaded from YAML.
type problems []string

func (p *problems) add(line int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	*p = append(*p, msg)
}

// addErr adds the caller-safe message of a store or query check.
func (p *problems) addErr(line int, prefix string, err error) {
	p.add(line, "%s: %s", prefix, fault.As(err).Message)
}

// err is nil without problems, else one fault.Invalid listing them all.
func (p problems) err(source string) error {
	if source == "" {
		source = "policy file"
	}
	switch len(p) {
	case 0:
		return nil
	case 1:
		return fault.New(fault.Invalid, "%s: %s", source, p[0])
	}
	return fault.New(fault.Invalid, "%s has %d problems:\n  %s", source, len(p), strings.Join(p, "\n  "))
}

// Validate checks everything that can be checked without the store, and
// reports every problem at once in one fault.Invalid, each with its line
// and the item it concerns: required fields; names; kinds; masks
// (query.ParseMask, in canonical form such as "-r--"); claims that encode
// as JSON; patterns; actions and effects; column lists; scope filters
// (variables and grammar, see CheckFilter); duplicates; and bindings that
// name a template missing from the file's templates section (when the file
// has one).
func (f *File) Validate() error {
	var p problems
	if f.Org == "" {
		p.add(f.orgLine, "org is required")
	}
	if f.Project == "" {
		p.add(f.projectLine, "project is required")
	}

	spaces := make(map[string]bool, len(f.Spaces))
	for i, s := range f.Spaces {
		what := item("space", s.Name, i)
		if err := store.CheckName("space name", s.Name); err != nil {
			p.addErr(s.line, what, err)
		} else if spaces[s.Name] {
			p.add(s.line, "%s is declared twice", what)
		}
		spaces[s.Name] = true
	}

	ids := make(map[string]bool, len(f.Identities))
	for i, id := range f.Identities {
		what := item("identity", id.Name, i)
		if err := store.CheckName("name", id.Name); err != nil {
			p.addErr(id.line, what, err)
		} else if ids[id.Name] {
			p.add(id.line, "%s is declared twice", what)
		}
		ids[id.Name] = true
		switch id.Kind {
		case "", store.KindUser, store.KindService, store.KindMCP:
		default:
			p.add(id.line, "%s: kind %q must be %s, %s or %s", what, id.Kind, store.KindUser, store.KindService, store.KindMCP)
		}
		if id.Space == "" {
			p.add(id.line, "%s: space is required", what)
		} else if err := store.CheckName("space", id.Space); err != nil {
			p.addErr(id.line, what, err)
		}
		roles := make(map[string]bool, len(id.Roles))
		for _, r := range id.Roles {
			if err := store.CheckName("role", r); err != nil {
				p.addErr(id.line, what, err)
			} else if roles[r] {
				p.add(id.line, "%s: role %q is listed twice", what, r)
			}
			roles[r] = true
		}
		if id.KeyType != "" {
			if err := checkMask(id.KeyType); err != nil {
				p.addErr(id.line, what+": key_type", err)
			}
		}
		if _, err := normClaims(id.Claims); err != nil {
			p.addErr(id.line, what, err)
		}
		for k := range id.Claims {
			if k == "" {
				p.add(id.line, "%s: a claim has an empty name", what)
			}
		}
	}

	templates := make(map[string]bool, len(f.Templates))
	for i, t := range f.Templates {
		what := item("template", t.Name, i)
		if err := store.CheckName("name", t.Name); err != nil {
			p.addErr(t.line, what, err)
		} else if templates[t.Name] {
			p.add(t.line, "%s is declared twice", what)
		}
		templates[t.Name] = true
		for j, r := range t.Rules {
			f.checkRule(&p, fmt.Sprintf("%s, rule %d", what, j+1), r)
		}
	}

	roles := make(map[string]bool, len(f.Bindings))
	for i, b := range f.Bindings {
		what := item("binding of role", b.Role, i)
		if err := store.CheckName("role", b.Role); err != nil {
			p.addErr(b.line, what, err)
		} else if roles[b.Role] {
			p.add(b.line, "role %q is bound twice; list all its templates in one binding", b.Role)
		}
		roles[b.Role] = true
		if len(b.Templates) == 0 {
			p.add(b.line, "%s names no template", what)
		}
		seen := make(map[string]bool, len(b.Templates))
		for _, name := range b.Templates {
			switch {
			case seen[name]:
				p.add(b.line, "%s names template %q twice", what, name)
			case f.Templates != nil && !templates[name]:
				p.add(b.line, "%s names unknown template %q", what, name)
			}
			seen[name] = true
		}
	}

	locks := make(map[string]bool, len(f.Locks))
	for i, l := range f.Locks {
		what := item("lock on", l.Object, i)
		if err := store.CheckPattern("object", l.Object); err != nil {
			p.addErr(l.line, what, err)
		} else if locks[l.Object] {
			p.add(l.line, "%s is declared twice", what)
		}
		locks[l.Object] = true
		if err := checkMask(l.Mask); err != nil {
			p.addErr(l.line, what, err)
		}
	}

	type roleObject struct{ role, object string }
	scopes := make(map[roleObject]bool, len(f.Scopes))
	for i, s := range f.Scopes {
		what := fmt.Sprintf("scope #%d", i+1)
		if s.Role != "" || s.Object != "" {
			what = fmt.Sprintf("scope of role %q on %q", s.Role, s.Object)
		}
		if err := store.CheckName("role", s.Role); err != nil {
			p.addErr(s.line, what, err)
		}
		if err := store.CheckPattern("object", s.Object); err != nil {
			p.addErr(s.line, what, err)
		}
		if k := (roleObject{s.Role, s.Object}); scopes[k] {
			p.add(s.line, "%s is declared twice", what)
		} else {
			scopes[k] = true
		}
		if err := CheckFilter(s.Filter); err != nil {
			p.add(s.line, "%s: %s", what, fault.As(err).Message)
		}
	}
	f.checkCustomAPIs(&p)
	return p.err(f.source)
}

func (f *File) checkRule(p *problems, what string, r Rule) {
	if err := store.CheckPattern("object", r.Object); err != nil {
		p.addErr(r.line, what, err)
	}
	if len(r.Actions) == 0 {
		p.add(r.line, "%s: actions are required (some of create, read, update, delete)", what)
	}
	seen := make(map[string]bool, len(r.Actions))
	for _, a := range r.Actions {
		switch a {
		case store.ActionCreate, store.ActionRead, store.ActionUpdate, store.ActionDelete, store.ActionSchema:
		default:
			p.add(r.line, "%s: action %q is not one of create, read, update, delete, schema", what, a)
		}
		if seen[a] {
			p.add(r.line, "%s: action %q is listed twice", what, a)
		}
		seen[a] = true
	}
	switch r.Effect {
	case "", store.EffectAllow, store.EffectDeny:
	default:
		p.add(r.line, "%s: effect %q must be allow or deny", what, r.Effect)
	}
	if r.Columns != nil && len(r.Columns) == 0 {
		p.add(r.line, "%s: columns is an empty list; omit it to grant every column", what)
	}
	cols := make(map[string]bool, len(r.Columns))
	for _, c := range r.Columns {
		if err := store.CheckName("column", c); err != nil {
			p.addErr(r.line, what, err)
		} else if cols[c] {
			p.add(r.line, "%s: column %q is listed twice", what, c)
		}
		cols[c] = true
	}
}

// item names the i-th element of a list for a message: by its key when it
// has one, else by its position.
func item(kind, key string, i int) string {
	if key == "" {
		return fmt.Sprintf("%s #%d", kind, i+1)
	}
	return fmt.Sprintf("%s %q", kind, key)
}

// checkMask accepts a CRUD mask in canonical form ("crud", "-r--").
func checkMask(s string) error {
	m, err := query.ParseMask(s)
	if err != nil {
		return err
	}
	if m.String() != s {
		return fault.New(fault.Invalid, "mask %q: write it as %q", s, m.String())
	}
	return nil
}

// normClaims returns claims as the store will give them back: through
// JSON, so numbers are float64 and nested maps map[string]any. nil becomes
// an empty map.
func normClaims(c map[string]any) (map[string]any, error) {
	if c == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "claims cannot be represented as JSON (nested maps need string keys)")
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "claims cannot be represented as JSON")
	}
	return out, nil
}

// CheckFilter checks a scope filter: one or more `column=op.value` terms
// joined by '&', each a filter of the REST grammar (query.ParseFilter),
// where values may hold the variables {identity}, {space}, {org},
// {project} and {claims.NAME} (NAME made of letters, digits, '_' and '-').
// Columns cannot be variables or reserved parameter names (fc, oy, …). The
// fault.Invalid message names the term and the problem.
func CheckFilter(filter string) error {
	if filter == "" {
		return fault.New(fault.Invalid, "filter is empty")
	}
	for term := range strings.SplitSeq(filter, "&") {
		if term == "" {
			return fault.New(fault.Invalid, "filter %q has an empty term (terms are joined by a single '&')", filter)
		}
		col, raw, ok := strings.Cut(term, "=")
		switch {
		case !ok:
			return fault.New(fault.Invalid, "filter term %q is not column=op.value", term)
		case col == "":
			return fault.New(fault.Invalid, "filter term %q has no column", term)
		case strings.ContainsAny(col, "{}"):
			return fault.New(fault.Invalid, "filter term %q: a column cannot be a variable", term)
		case query.IsReserved(col):
			return fault.New(fault.Invalid, "filter term %q: %q is a reserved parameter, not a column", term, col)
		}
		if err := checkVars(term, raw); err != nil {
			return err
		}
		if _, err := query.ParseFilter(col, raw); err != nil {
			return fault.New(fault.Invalid, "filter term %q: %s", term, fault.As(err).Message)
		}
	}
	return nil
}

// checkVars accepts only the known {variables} in a filter value.
func checkVars(term, v string) error {
	for {
		open := strings.IndexAny(v, "{}")
		if open < 0 {
			return nil
		}
		if v[open] == '}' {
			return fault.New(fault.Invalid, "filter term %q: '}' without '{'", term)
		}
		end := strings.IndexAny(v[open+1:], "{}")
		if end < 0 || v[open+1+end] == '{' {
			return fault.New(fault.Invalid, "filter term %q: '{' without '}'", term)
		}
		name := v[open+1 : open+1+end]
		if !validVar(name) {
			return fault.New(fault.Invalid, "filter term %q: unknown variable {%s} (use {identity}, {space}, {org}, {project} or {claims.NAME})", term, name)
		}
		v = v[open+1+end+1:]
	}
}

func validVar(name string) bool {
	if filterVars[name] {
		return true
	}
	claim, ok := strings.CutPrefix(name, "claims.")
	if !ok || claim == "" {
		return false
	}
	for _, r := range claim {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
