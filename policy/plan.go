package policy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// Op is what a Change does.
type Op byte

// The operations of a plan, shown as the first character of its line.
const (
	Add    Op = '+'
	Remove Op = '-'
	Modify Op = '~'
)

// Change is one line of a plan: an object added, removed or modified.
type Change struct {
	Op Op
	// Kind is org, project, space, identity, template, binding, lock or
	// scope.
	Kind string
	// Name identifies the object within its kind: a name, a role, a
	// pattern, or "ROLE on OBJECT" for a scope.
	Name string
	// Detail describes the object (Add, Remove) or what differs (Modify).
	Detail string
}

// String renders the change as one line, e.g.
// `+ identity alice (user, space main, roles [hr-analyst])` or
// `~ identity bob: roles [a] -> [a b]`.
func (c Change) String() string {
	if c.Op == Modify {
		return fmt.Sprintf("~ %s %s: %s", c.Kind, c.Name, c.Detail)
	}
	s := fmt.Sprintf("%c %s %s", c.Op, c.Kind, c.Name)
	if c.Detail != "" {
		s += " " + c.Detail
	}
	return s
}

// Changes is a plan: what Apply does, or did, in order.
type Changes []Change

// Empty reports whether there is nothing to change.
func (cs Changes) Empty() bool { return len(cs) == 0 }

// String renders one line per change, each ending in a newline, or
// "= nothing to change" when there is none.
func (cs Changes) String() string {
	if len(cs) == 0 {
		return "= nothing to change\n"
	}
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Plan validates f and computes what Apply would change in st, writing
// nothing. A file that fails Validate, or whose resulting policy the store
// would refuse (store.CheckPolicy, e.g. a kept binding naming a removed
// template), is fault.Invalid.
func Plan(ctx context.Context, st *store.Store, f *File) (Changes, error) {
	p, err := makePlan(ctx, st, f)
	if err != nil {
		return nil, err
	}
	return p.changes, nil
}

// Apply makes st match f (see the package doc) and returns what it
// changed. When nothing differs it writes nothing, so the change counter
// does not move. If a write fails part way, the error says so; what was
// written stays, and applying the file again completes it.
func Apply(ctx context.Context, st *store.Store, f *File) (Changes, error) {
	p, err := makePlan(ctx, st, f)
	if err != nil {
		return nil, err
	}
	if p.changes.Empty() {
		return p.changes, nil
	}
	wrote := false
	fail := func(err error) (Changes, error) {
		if !wrote {
			return nil, err
		}
		fe := fault.As(err)
		return nil, fault.Wrap(fe.Kind, err, "apply stopped part way (apply the file again to finish): %s", fe.Message)
	}
	if !p.orgFound {
		if p.org, err = st.CreateOrg(ctx, f.Org, f.Org); err != nil {
			return fail(err)
		}
		wrote = true
	}
	if !p.projectFound {
		if p.project, err = st.CreateProject(ctx, p.org.ID, f.Project, f.Project); err != nil {
			return fail(err)
		}
		wrote = true
	}
	for _, s := range p.newSpaces {
		sp, err := st.CreateSpace(ctx, p.project.ID, s.Name, s.MCPEnabled)
		if err != nil {
			return fail(err)
		}
		wrote = true
		p.spaceIDs[sp.Name] = sp.ID
	}
	for _, s := range p.mcpSpaces {
		if err := st.SetSpaceMCP(ctx, s.ID, s.MCPEnabled); err != nil {
			return fail(err)
		}
		wrote = true
	}
	for _, w := range p.newIdentities {
		w.id.ProjectID, w.id.SpaceID = p.project.ID, p.spaceIDs[w.space]
		if _, err := st.CreateIdentity(ctx, w.id); err != nil {
			return fail(err)
		}
		wrote = true
	}
	for _, w := range p.updIdentities {
		w.id.SpaceID = p.spaceIDs[w.space]
		if _, err := st.UpdateIdentity(ctx, w.id); err != nil {
			return fail(err)
		}
		wrote = true
	}
	if p.policyChanged {
		if err := st.ReplacePolicy(ctx, p.project.ID, p.policy); err != nil {
			return fail(err)
		}
		wrote = true
	}
	if p.customChanged {
		if err := st.ReplaceCustomAPIs(ctx, p.project.ID, p.customAPIs); err != nil {
			return fail(err)
		}
	}
	return p.changes, nil
}

// plan is a computed plan with what Apply needs to carry it out.
type plan struct {
	changes Changes

	org          store.Org
	orgFound     bool
	project      store.Project
	projectFound bool

	spaceIDs  map[string]string // space name → id, existing and created
	newSpaces []store.Space     // Name, MCPEnabled
	mcpSpaces []store.Space     // ID, MCPEnabled

	newIdentities []wantIdentity
	updIdentities []wantIdentity

	policy        store.Policy
	policyChanged bool

	customAPIs    []store.CustomAPI // the section's definitions, when present
	customChanged bool
}

// wantIdentity is an identity to write, with its space by name (it may not
// exist yet when the plan is made).
type wantIdentity struct {
	id    store.Identity
	space string
}

func (p *plan) add(op Op, kind, name, format string, args ...any) {
	p.changes = append(p.changes, Change{Op: op, Kind: kind, Name: name, Detail: fmt.Sprintf(format, args...)})
}

func makePlan(ctx context.Context, st *store.Store, f *File) (*plan, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	p := &plan{spaceIDs: map[string]string{}}
	var err error
	p.org, err = findOrg(ctx, st, f.Org)
	switch {
	case err == nil:
		p.orgFound = true
	case fault.KindOf(err) != fault.NotFound:
		return nil, err
	default:
		if err := store.CheckAbbr("org", f.Org); err != nil {
			return nil, fault.New(fault.Invalid, "org %q does not exist; apply creates it only when its name is also a valid abbreviation: %s", f.Org, fault.As(err).Message)
		}
		p.add(Add, "org", f.Org, "")
	}
	if p.orgFound {
		p.project, err = findProject(ctx, st, p.org.ID, f.Project)
		switch {
		case err == nil:
			p.projectFound = true
		case fault.KindOf(err) != fault.NotFound:
			return nil, err
		}
	}
	if !p.projectFound {
		if err := store.CheckAbbr("project", f.Project); err != nil {
			return nil, fault.New(fault.Invalid, "project %q does not exist; apply creates it only when its name is also a valid abbreviation: %s", f.Project, fault.As(err).Message)
		}
		p.add(Add, "project", f.Project, "")
	}

	var (
		spaces     []store.Space
		identities []store.Identity
		current    = store.Policy{}
		customAPIs []store.CustomAPI
	)
	if p.projectFound {
		if spaces, err = st.Spaces(ctx, p.project.ID); err != nil {
			return nil, err
		}
		if identities, err = st.ListIdentities(ctx, p.project.ID); err != nil {
			return nil, err
		}
		if current, err = st.Policy(ctx, p.project.ID); err != nil {
			return nil, err
		}
		if customAPIs, err = st.CustomAPIs(ctx, p.project.ID); err != nil {
			return nil, err
		}
	}
	p.planSpaces(f, spaces)
	p.planIdentities(f, identities, spaces)
	if err := p.planPolicy(f, current); err != nil {
		return nil, err
	}
	p.planCustomAPIs(f, customAPIs)
	return p, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (p *plan) planSpaces(f *File, spaces []store.Space) {
	byName := make(map[string]store.Space, len(spaces))
	for _, s := range spaces {
		byName[s.Name] = s
		p.spaceIDs[s.Name] = s.ID
	}
	planned := map[string]bool{}
	for _, s := range f.Spaces {
		cur, ok := byName[s.Name]
		switch {
		case !ok:
			mcp := s.MCP != nil && *s.MCP
			p.newSpaces = append(p.newSpaces, store.Space{Name: s.Name, MCPEnabled: mcp})
			planned[s.Name] = true
			p.add(Add, "space", s.Name, "(mcp %s)", onOff(mcp))
		case s.MCP != nil && *s.MCP != cur.MCPEnabled:
			p.mcpSpaces = append(p.mcpSpaces, store.Space{ID: cur.ID, MCPEnabled: *s.MCP})
			p.add(Modify, "space", s.Name, "mcp %s -> %s", onOff(cur.MCPEnabled), onOff(*s.MCP))
		}
	}
	// Spaces an identity names but nothing declares are created, MCP off.
	for _, id := range f.Identities {
		if _, ok := byName[id.Space]; ok || planned[id.Space] {
			continue
		}
		planned[id.Space] = true
		p.newSpaces = append(p.newSpaces, store.Space{Name: id.Space})
		p.add(Add, "space", id.Space, "(mcp off, named by identity %s)", id.Name)
	}
}

// want is the identity the file declares, defaults applied.
func (id Identity) want() store.Identity {
	out := store.Identity{Name: id.Name, Kind: id.Kind, KeyType: id.KeyType, Enabled: true,
		Roles: slices.Clone(id.Roles)}
	if out.Kind == "" {
		out.Kind = DefaultKind
	}
	if out.KeyType == "" {
		out.KeyType = DefaultKeyType
	}
	if id.Enabled != nil {
		out.Enabled = *id.Enabled
	}
	if out.Roles == nil {
		out.Roles = []string{}
	}
	out.Claims, _ = normClaims(id.Claims) // checked by Validate
	return out
}

func (p *plan) planIdentities(f *File, identities []store.Identity, spaces []store.Space) {
	byName := make(map[string]store.Identity, len(identities))
	for _, id := range identities {
		byName[id.Name] = id
	}
	spaceName := make(map[string]string, len(spaces))
	for _, s := range spaces {
		spaceName[s.ID] = s.Name
	}
	for _, spec := range f.Identities {
		want := spec.want()
		cur, ok := byName[spec.Name]
		if !ok {
			p.newIdentities = append(p.newIdentities, wantIdentity{id: want, space: spec.Space})
			p.add(Add, "identity", spec.Name, "(%s)", describeIdentity(want, spec.Space))
			continue
		}
		n := len(p.changes)
		diff := func(field string, from, to any) {
			p.add(Modify, "identity", spec.Name, "%s %v -> %v", field, from, to)
		}
		if cur.Kind != want.Kind {
			diff("kind", cur.Kind, want.Kind)
		}
		if curSpace := spaceName[cur.SpaceID]; curSpace != spec.Space {
			diff("space", curSpace, spec.Space)
		}
		if !sameSet(cur.Roles, want.Roles) {
			diff("roles", cur.Roles, want.Roles)
		}
		if !reflect.DeepEqual(cur.Claims, want.Claims) {
			diff("claims", claimsText(cur.Claims), claimsText(want.Claims))
		}
		if cur.KeyType != want.KeyType {
			diff("key_type", cur.KeyType, want.KeyType)
		}
		if cur.Enabled != want.Enabled {
			diff("enabled", cur.Enabled, want.Enabled)
		}
		if len(p.changes) > n {
			want.ID = cur.ID
			p.updIdentities = append(p.updIdentities, wantIdentity{id: want, space: spec.Space})
		}
	}
}

func describeIdentity(id store.Identity, space string) string {
	s := fmt.Sprintf("%s, space %s, roles %v", id.Kind, space, id.Roles)
	if len(id.Claims) > 0 {
		s += ", claims " + claimsText(id.Claims)
	}
	if id.KeyType != DefaultKeyType {
		s += ", key_type " + id.KeyType
	}
	if !id.Enabled {
		s += ", disabled"
	}
	return s
}

// claimsText renders claims as compact JSON with sorted keys.
func claimsText(c map[string]any) string {
	if c == nil {
		c = map[string]any{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprint(c)
	}
	return string(b)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// planPolicy builds the policy the project will have — the store's, with
// each section the file has replaced — and the lines of what differs.
func (p *plan) planPolicy(f *File, current store.Policy) error {
	cur := canon(current)
	want := cur
	if f.Templates != nil {
		want.Templates = make([]store.Template, 0, len(f.Templates))
		for _, t := range f.Templates {
			st := store.Template{Name: t.Name, Rules: make([]store.Rule, 0, len(t.Rules))}
			for _, r := range t.Rules {
				st.Rules = append(st.Rules, store.Rule{Object: r.Object, Actions: slices.Clone(r.Actions),
					Columns: slices.Clone(r.Columns), Effect: r.Effect})
			}
			want.Templates = append(want.Templates, st)
		}
	}
	if f.Bindings != nil {
		want.Bindings = make([]store.Binding, 0, len(f.Bindings))
		for _, b := range f.Bindings {
			want.Bindings = append(want.Bindings, store.Binding{Role: b.Role, Templates: slices.Clone(b.Templates)})
		}
	}
	if f.Locks != nil {
		want.Locks = make([]store.Lock, 0, len(f.Locks))
		for _, l := range f.Locks {
			want.Locks = append(want.Locks, store.Lock{Pattern: l.Object, Mask: l.Mask})
		}
	}
	if f.Scopes != nil {
		want.Scopes = make([]store.Scope, 0, len(f.Scopes))
		for _, s := range f.Scopes {
			want.Scopes = append(want.Scopes, store.Scope{Role: s.Role, Object: s.Object, Filter: s.Filter})
		}
	}
	want = canon(want)
	if err := store.CheckPolicy(want); err != nil {
		return err
	}
	p.policy = want
	p.policyChanged = !reflect.DeepEqual(cur, want)
	if p.policyChanged {
		p.diffPolicy(cur, want)
	}
	return nil
}

// canon puts a policy in the form the store returns, without ids: sorted
// as store.Policy documents, effects filled in, no nil slices except a
// rule's Columns meaning every column.
func canon(in store.Policy) store.Policy {
	out := store.Policy{
		Templates: make([]store.Template, 0, len(in.Templates)),
		Bindings:  make([]store.Binding, 0, len(in.Bindings)),
		Scopes:    slices.Clone(in.Scopes),
		Locks:     make([]store.Lock, 0, len(in.Locks)),
	}
	if out.Scopes == nil {
		out.Scopes = []store.Scope{}
	}
	for _, t := range in.Templates {
		ct := store.Template{Name: t.Name, Rules: make([]store.Rule, 0, len(t.Rules))}
		for _, r := range t.Rules {
			if r.Effect == "" {
				r.Effect = store.EffectAllow
			}
			if r.Actions == nil {
				r.Actions = []string{}
			}
			ct.Rules = append(ct.Rules, r)
		}
		out.Templates = append(out.Templates, ct)
	}
	slices.SortFunc(out.Templates, func(a, b store.Template) int { return strings.Compare(a.Name, b.Name) })
	for _, b := range in.Bindings {
		ts := slices.Clone(b.Templates)
		if ts == nil {
			ts = []string{}
		}
		slices.Sort(ts)
		out.Bindings = append(out.Bindings, store.Binding{Role: b.Role, Templates: ts})
	}
	slices.SortFunc(out.Bindings, func(a, b store.Binding) int { return strings.Compare(a.Role, b.Role) })
	slices.SortFunc(out.Scopes, func(a, b store.Scope) int {
		return cmp.Or(strings.Compare(a.Role, b.Role), strings.Compare(a.Object, b.Object))
	})
	for _, l := range in.Locks {
		out.Locks = append(out.Locks, store.Lock{Pattern: l.Pattern, Mask: l.Mask})
	}
	slices.SortFunc(out.Locks, func(a, b store.Lock) int { return strings.Compare(a.Pattern, b.Pattern) })
	return out
}

func (p *plan) diffPolicy(cur, want store.Policy) {
	curT := index(cur.Templates, func(t store.Template) string { return t.Name })
	wantT := index(want.Templates, func(t store.Template) string { return t.Name })
	for _, name := range union(curT, wantT) {
		c, inCur := curT[name]
		w, inWant := wantT[name]
		switch {
		case !inCur:
			p.add(Add, "template", name, "(%s)", plural(len(w.Rules), "rule"))
		case !inWant:
			p.add(Remove, "template", name, "(%s)", plural(len(c.Rules), "rule"))
		default:
			for i := range max(len(c.Rules), len(w.Rules)) {
				switch {
				case i >= len(c.Rules):
					p.add(Modify, "template", name, "+ rule %d: %s", i+1, ruleText(w.Rules[i]))
				case i >= len(w.Rules):
					p.add(Modify, "template", name, "- rule %d: %s", i+1, ruleText(c.Rules[i]))
				case !reflect.DeepEqual(c.Rules[i], w.Rules[i]):
					p.add(Modify, "template", name, "rule %d: %s -> %s", i+1, ruleText(c.Rules[i]), ruleText(w.Rules[i]))
				}
			}
		}
	}

	curB := index(cur.Bindings, func(b store.Binding) string { return b.Role })
	wantB := index(want.Bindings, func(b store.Binding) string { return b.Role })
	for _, role := range union(curB, wantB) {
		c, inCur := curB[role]
		w, inWant := wantB[role]
		switch {
		case !inCur:
			p.add(Add, "binding", role, "-> %v", w.Templates)
		case !inWant:
			p.add(Remove, "binding", role, "-> %v", c.Templates)
		case !slices.Equal(c.Templates, w.Templates):
			p.add(Modify, "binding", role, "%v -> %v", c.Templates, w.Templates)
		}
	}

	curL := index(cur.Locks, func(l store.Lock) string { return l.Pattern })
	wantL := index(want.Locks, func(l store.Lock) string { return l.Pattern })
	for _, pat := range union(curL, wantL) {
		c, inCur := curL[pat]
		w, inWant := wantL[pat]
		switch {
		case !inCur:
			p.add(Add, "lock", pat, "%s", w.Mask)
		case !inWant:
			p.add(Remove, "lock", pat, "%s", c.Mask)
		case c.Mask != w.Mask:
			p.add(Modify, "lock", pat, "%s -> %s", c.Mask, w.Mask)
		}
	}

	scopeKey := func(s store.Scope) string { return s.Role + " on " + s.Object }
	curS := index(cur.Scopes, scopeKey)
	wantS := index(want.Scopes, scopeKey)
	for _, key := range union(curS, wantS) {
		c, inCur := curS[key]
		w, inWant := wantS[key]
		switch {
		case !inCur:
			p.add(Add, "scope", key, "where %s", w.Filter)
		case !inWant:
			p.add(Remove, "scope", key, "where %s", c.Filter)
		case c.Filter != w.Filter:
			p.add(Modify, "scope", key, "where %s -> where %s", c.Filter, w.Filter)
		}
	}
}

// ruleText renders a rule on one line, e.g.
// `allow [read] on pg/public/employees, columns [id full_name]`.
func ruleText(r store.Rule) string {
	effect := r.Effect
	if effect == "" {
		effect = store.EffectAllow
	}
	s := fmt.Sprintf("%s %v on %s", effect, r.Actions, r.Object)
	if r.Columns != nil {
		s += fmt.Sprintf(", columns %v", r.Columns)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func index[T any](items []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[key(it)] = it
	}
	return m
}

// union returns the keys of both maps, sorted.
func union[T any](a, b map[string]T) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
