package policy

import (
	"context"
	"fmt"
	"strings"

	"github.com/littlebitlabs/minimal/store"
)

// Resolve finds a project by the abbreviations of its org and itself (the
// form URLs and policy files use; display names may be renamed, the
// abbreviations may not). A missing one is fault.NotFound. It is the one
// lookup of every CLI command.
func Resolve(ctx context.Context, st *store.Store, org, project string) (store.Org, store.Project, error) {
	o, err := findOrg(ctx, st, org)
	if err != nil {
		return store.Org{}, store.Project{}, err
	}
	p, err := findProject(ctx, st, o.ID, project)
	if err != nil {
		return store.Org{}, store.Project{}, err
	}
	return o, p, nil
}

func findOrg(ctx context.Context, st *store.Store, abbr string) (store.Org, error) {
	return st.OrgByAbbr(ctx, abbr)
}

func findProject(ctx context.Context, st *store.Store, orgID, abbr string) (store.Project, error) {
	return st.ProjectByAbbr(ctx, orgID, abbr)
}

// Export returns the whole state of a project as a policy file: every
// space and identity (with their kind, space, roles, claims, key_type and
// enabled flag written out), the four policy sections and the custom APIs
// (always present, so applying the file replaces them). Applying it to the same store is
// nothing to change.
func Export(ctx context.Context, st *store.Store, org, project string) (*File, error) {
	o, p, err := Resolve(ctx, st, org, project)
	if err != nil {
		return nil, err
	}
	spaces, err := st.Spaces(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	identities, err := st.ListIdentities(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	pol, err := st.Policy(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	apis, err := st.CustomAPIs(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	f := &File{
		Org: o.Abbr, Project: p.Abbr,
		Templates: make([]Template, 0, len(pol.Templates)),
		Bindings:  make([]Binding, 0, len(pol.Bindings)),
		Locks:     make([]Lock, 0, len(pol.Locks)),
		Scopes:    make([]Scope, 0, len(pol.Scopes)),

		CustomAPIs: make([]CustomAPI, 0, len(apis)),
	}
	spaceName := make(map[string]string, len(spaces))
	for _, s := range spaces {
		spaceName[s.ID] = s.Name
		f.Spaces = append(f.Spaces, Space{Name: s.Name, MCP: ptr(s.MCPEnabled)})
	}
	for _, id := range identities {
		out := Identity{Name: id.Name, Kind: id.Kind, Space: spaceName[id.SpaceID], Roles: id.Roles,
			KeyType: id.KeyType, Enabled: ptr(id.Enabled)}
		if len(id.Claims) > 0 {
			out.Claims = id.Claims
		}
		f.Identities = append(f.Identities, out)
	}
	for _, t := range pol.Templates {
		out := Template{Name: t.Name, Rules: make([]Rule, 0, len(t.Rules))}
		for _, r := range t.Rules {
			rule := Rule{Object: r.Object, Actions: r.Actions, Columns: r.Columns}
			if r.Effect != store.EffectAllow {
				rule.Effect = r.Effect
			}
			out.Rules = append(out.Rules, rule)
		}
		f.Templates = append(f.Templates, out)
	}
	for _, b := range pol.Bindings {
		f.Bindings = append(f.Bindings, Binding{Role: b.Role, Templates: b.Templates})
	}
	for _, l := range pol.Locks {
		f.Locks = append(f.Locks, Lock{Object: l.Pattern, Mask: l.Mask})
	}
	for _, s := range pol.Scopes {
		f.Scopes = append(f.Scopes, Scope{Role: s.Role, Object: s.Object, Filter: s.Filter})
	}
	for _, d := range apis {
		f.CustomAPIs = append(f.CustomAPIs, fromDef(d))
	}
	return f, nil
}

func ptr[T any](v T) *T { return &v }

// Text renders the file for reading rather than applying: one line per
// space, identity, binding, lock and scope, and per template its numbered
// rules. Defaults are written out.
func (f *File) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "org %s, project %s\n", f.Org, f.Project)
	for _, s := range f.Spaces {
		fmt.Fprintf(&b, "space %s (mcp %s)\n", s.Name, onOff(s.MCP != nil && *s.MCP))
	}
	for _, id := range f.Identities {
		w := id.want()
		fmt.Fprintf(&b, "identity %s (%s, space %s, roles %v, key_type %s", w.Name, w.Kind, id.Space, w.Roles, w.KeyType)
		if len(w.Claims) > 0 {
			fmt.Fprintf(&b, ", claims %s", claimsText(w.Claims))
		}
		if !w.Enabled {
			b.WriteString(", disabled")
		}
		b.WriteString(")\n")
	}
	for _, t := range f.Templates {
		fmt.Fprintf(&b, "template %s (%s)\n", t.Name, plural(len(t.Rules), "rule"))
		for i, r := range t.Rules {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, ruleText(store.Rule{Object: r.Object, Actions: r.Actions, Columns: r.Columns, Effect: r.Effect}))
		}
	}
	for _, bd := range f.Bindings {
		fmt.Fprintf(&b, "binding %s -> %v\n", bd.Role, bd.Templates)
	}
	for _, l := range f.Locks {
		fmt.Fprintf(&b, "lock %s %s\n", l.Object, l.Mask)
	}
	for _, s := range f.Scopes {
		fmt.Fprintf(&b, "scope %s on %s where %s\n", s.Role, s.Object, s.Filter)
	}
	f.customAPIsText(&b)
	return b.String()
}
