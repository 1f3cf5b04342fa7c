package engine

import (
	"context"
	"slices"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// grant is what the permission gates leave a plan: the source, the table as
// the caller may see it (view), the full table (for scope columns), and the
// instantiated row scope (nil = unscoped).
type grant struct {
	src   dialects.Source
	table *dialects.Table
	view  *dialects.Table
	scope query.Expr
	roles []string
}

// authorize resolves the table and runs the three gates in order: lock mask,
// permission template, row scope. A table the caller holds no action on
// answers exactly like a table that does not exist.
//
// tr, when not nil, records each gate's decision for `policy explain`.
func (e *Engine) authorize(ctx context.Context, p *auth.Principal, plan *query.Plan, object string, tr *Explanation) (*grant, error) {
	d, err := e.authz.Decide(p.ProjectID, p.Roles, object, plan.Action)
	if err != nil {
		return nil, err
	}
	if d.Hidden {
		tr.gate("visibility", "hidden", "no role holds any action on %s: answers 404 like a missing table", object)
		e.refused(ctx, tr, GateHidden)
		return nil, errNoTable
	}
	s := e.cat.get(p.ProjectID, plan.Type, plan.Schema)
	if s == nil {
		tr.gate("catalog", "not found", "no database %s/%s is registered", plan.Type, plan.Schema)
		return nil, errNoTable
	}
	src, tbl, err := s.table(ctx, plan.Table, e.cfg.RefreshInterval, e.cfg.MissRefresh)
	if err != nil {
		tr.gate("catalog", "not found", "%s", fault.As(err).Message)
		return nil, err
	}

	// Gate 1: lock mask — the token's key_type AND every matching lock.
	eff := permissions.EffectiveMask(p.KeyType, e.authz.Locks(p.ProjectID), object)
	if !p.KeyType.Allows(plan.Action) {
		tr.gate("1 lock mask", "refuse", "key_type %s does not allow %s", p.KeyType, plan.Action)
		e.refused(ctx, tr, GateLock)
		return nil, permissions.Refusal(p.Roles)
	}
	if !eff.Allows(plan.Action) {
		tr.gate("1 lock mask", "refuse", "key_type %s AND locks = %s: %s is locked", p.KeyType, eff, plan.Action)
		e.refused(ctx, tr, GateLock)
		return nil, permissions.LockedRefusal(plan.Action, p.Roles)
	}
	tr.gate("1 lock mask", "pass", "key_type %s AND locks = %s", p.KeyType, eff)
	// Gate 2: permission template.
	if !d.Allowed {
		tr.gate("2 template", "refuse", "no allow rule for %s on %s for roles %v, or a deny rule matched", plan.Action, object, p.Roles)
		e.refused(ctx, tr, GateTemplate)
		return nil, permissions.Refusal(p.Roles)
	}
	if d.Columns == nil {
		tr.gate("2 template", "pass", "roles %v may %s every column", p.Roles, plan.Action)
	} else {
		tr.gate("2 template", "pass", "roles %v may %s columns %v", p.Roles, plan.Action, d.Columns)
	}
	g := &grant{src: src, table: tbl, view: restrict(tbl, d.Columns), roles: p.Roles}
	// Gate 3: row scope, instantiated for this caller.
	if d.Scopes != nil {
		vars := permissions.Vars{Identity: p.Identity, Space: p.Space, Org: p.Org, Project: p.Project, Claims: p.Claims}
		var or query.Or
		for _, group := range d.Scopes {
			var and query.And
			for _, f := range group {
				x, err := f.Instantiate(vars)
				if err != nil {
					tr.gate("3 row scope", "refuse", "%s", fault.As(err).Message)
					e.refused(ctx, tr, GateScope)
					return nil, permissions.Refusal(p.Roles)
				}
				and = append(and, x)
			}
			or = append(or, and)
		}
		// Scope values are coerced against the full table: a scope may use
		// a column the caller cannot see. A scope naming a column the table
		// lacks refuses the call (fail closed).
		if err := query.Walk(or, func(c *query.Cond) error { return coerceCond(c, tbl) }); err != nil {
			e.log.Warn("row scope does not fit the table; refusing", "object", object, "err", err)
			tr.gate("3 row scope", "refuse", "scope does not fit the table: %s", fault.As(err).Message)
			e.refused(ctx, tr, GateScope)
			return nil, permissions.Refusal(p.Roles)
		}
		g.scope = or
		tr.gate("3 row scope", "pass", "rows limited to %s", query.Format(or))
	} else {
		tr.gate("3 row scope", "pass", "unscoped")
	}
	return g, nil
}

// applyScope ANDs the row scope into reads, updates and deletes, and
// refuses inserted rows and update values that would fall outside it.
func (g *grant) applyScope(plan *query.Plan) error {
	if g.scope == nil {
		return nil
	}
	switch plan.Action {
	case query.Read, query.Delete:
		plan.Where = andWhere(plan.Where, g.scope)
	case query.Update:
		set := make(map[string]any, len(plan.Set))
		for _, a := range plan.Set {
			set[a.Column] = a.Value
		}
		after, t := query.Residual(g.scope, func(c string) (any, bool) { v, ok := set[c]; return v, ok })
		if t == query.False {
			return permissions.Refusal(g.roles)
		}
		plan.Where = andWhere(plan.Where, g.scope)
		if t == query.Unknown {
			// Rows whose new values would leave the scope are not touched.
			plan.Where = andWhere(plan.Where, after)
		}
	case query.Insert:
		for _, row := range plan.Rows {
			_, t := query.Residual(g.scope, func(c string) (any, bool) {
				i := slices.Index(plan.Columns, c)
				if i < 0 {
					return nil, false
				}
				return row[i], true
			})
			if t != query.True {
				return permissions.Refusal(g.roles)
			}
		}
	}
	return nil
}

func andWhere(a, b query.Expr) query.Expr {
	if a == nil {
		return b
	}
	return query.And{a, b}
}

// restrict returns the table as seen through a column list (nil: all).
func restrict(t *dialects.Table, cols []string) *dialects.Table {
	if cols == nil {
		return t
	}
	v := &dialects.Table{Schema: t.Schema, Name: t.Name, Columns: make([]dialects.Column, 0, len(cols))}
	for _, c := range t.Columns {
		if _, ok := slices.BinarySearch(cols, c.Name); ok {
			v.Columns = append(v.Columns, c)
		}
	}
	return v
}

// project keeps the returned columns the caller may read.
func project(cols []dialects.Column, rows [][]any, visible []string) ([]dialects.Column, [][]any) {
	if visible == nil {
		return cols, rows
	}
	var keep []int
	var out []dialects.Column
	for i, c := range cols {
		if _, ok := slices.BinarySearch(visible, c.Name); ok {
			keep = append(keep, i)
			out = append(out, c)
		}
	}
	prow := make([][]any, len(rows))
	for r, row := range rows {
		nr := make([]any, len(keep))
		for j, i := range keep {
			nr[j] = row[i]
		}
		prow[r] = nr
	}
	return out, prow
}
