package engine

import (
	"context"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// ActionGrant is one action the principal holds on a table, as every gate
// decides it (permissions.Authorize: key_type and locks, templates with
// their column lists, row scopes instantiated for the principal).
type ActionGrant struct {
	Action query.Action
	// Columns the action may use, in table order.
	Columns []dialects.Column
	// Scoped: a row scope narrows the rows the action reaches.
	Scoped bool
}

// TableAccess is a table the principal may see, with the actions it holds
// on it. Columns are those some held action may use, in table order; a
// visible table may hold no action (its key_type or a lock takes every
// granted action away), and its Columns are then those Tables lists.
type TableAccess struct {
	TableInfo
	Actions []ActionGrant
}

// accessOrder is the order of TableAccess.Actions.
var accessOrder = [...]query.Action{query.Read, query.Insert, query.Update, query.Delete}

// Access lists the tables of a project's database the principal may see
// (exactly those Tables lists, hidden tables absent) with the actions it
// holds on each and the columns of every action. Discovery and the
// per-caller OpenAPI document of the REST face are built from it; nothing
// runs on the database but the catalog's cached introspection.
func (e *Engine) Access(ctx context.Context, p *auth.Principal, typ, schema string) ([]TableAccess, error) {
	vis, err := e.Tables(ctx, p, typ, schema)
	if err != nil {
		return nil, err
	}
	s := e.cat.get(p.ProjectID, typ, schema)
	if s == nil {
		return nil, fault.New(fault.NotFound, "database %s/%s not found", typ, schema)
	}
	all, err := s.allTables(ctx, e.cfg.RefreshInterval, e.cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	full := make(map[string]*dialects.Table, len(all))
	for _, t := range all {
		full[t.Name] = t
	}
	out := make([]TableAccess, 0, len(vis))
	sub := p.Subject()
	for _, ti := range vis {
		t := full[ti.Name]
		if t == nil {
			continue // dropped between the two looks at the cache
		}
		ta := TableAccess{TableInfo: ti}
		object := permissions.Object(typ, schema, ti.Name)
		for _, act := range accessOrder {
			g, err := e.authz.Authorize(sub, object, act)
			if err != nil {
				if refusedGate(err) != "" {
					continue // not held
				}
				return nil, err
			}
			ta.Actions = append(ta.Actions, ActionGrant{Action: act, Columns: restrict(t, g.Columns).Columns, Scoped: g.Scope != nil})
		}
		if len(ta.Actions) > 0 {
			used := map[string]bool{}
			for _, g := range ta.Actions {
				for _, c := range g.Columns {
					used[c.Name] = true
				}
			}
			ta.Columns = nil
			for _, c := range t.Columns {
				if used[c.Name] {
					ta.Columns = append(ta.Columns, c)
				}
			}
		}
		out = append(out, ta)
	}
	return out, nil
}
