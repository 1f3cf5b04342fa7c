package engine

import (
	"context"
	"slices"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// writeOptions prepares an upsert (Plan.OnConflict) and a write that
// returns its rows (Plan.Return), after the plan's own gates, validation
// and scope have passed.
//
// An upsert that merges is an insert and an update: besides the insert's
// gates (its rows hold to the insert scope, applyScope), the caller must
// be allowed to update the table (every gate, as for any update), every
// merged column must be one it may update, the rows' values must satisfy
// the update scope (so an update cannot move a row out of it, decided by
// the database like any written value), and the update scope becomes the
// plan's Where, which the dialect writes into the update part: a
// conflicting row outside the scope is left as it is. A dialect that cannot
// limit the update refuses the plan (sqlgen.UpsertOnDuplicateKey).
//
// An upsert that ignores duplicates gets the caller's read scope as its
// Where (ignoreScope): a source that answers the conflicting rows it kept
// (MariaDB's RETURNING does) answers only those the caller may read.
//
// A write that returns its rows returns only the columns the caller may
// read; the caller must hold read on the table.
func (e *Engine) writeOptions(ctx context.Context, p *auth.Principal, plan *query.Plan, object string, g *grant) error {
	if len(plan.OnConflict) > 0 {
		if plan.Action != query.Insert {
			return fault.New(fault.Invalid, "on_conflict is only valid on an insert")
		}
		for _, c := range plan.OnConflict {
			if !slices.Contains(plan.Columns, c) {
				if _, ok := g.view.Column(c); !ok {
					return unknownColumn(c)
				}
				return fault.New(fault.Invalid, "on_conflict column %q has no value in the rows: every row must give it", c)
			}
		}
		if plan.Resolution != query.ResolveIgnore {
			plan.Resolution = query.ResolveMerge
			up := *plan
			up.Action = query.Update
			ug, err := e.authorize(ctx, p, &up, object, nil)
			if err != nil {
				return err
			}
			for _, c := range plan.Columns {
				if _, ok := ug.view.Column(c); !ok && !slices.Contains(plan.OnConflict, c) {
					return unknownColumn(c)
				}
			}
			if ug.scope != nil {
				ins := *plan
				ins.Where = nil
				if err := (&grant{src: ug.src, table: ug.table, scope: ug.scope, roles: ug.roles}).applyScope(ctx, &ins); err != nil {
					if fault.KindOf(err) == fault.Forbidden {
						e.refused(ctx, nil, GateScope)
					}
					return err
				}
				plan.Where = ug.scope
			}
		} else if err := e.ignoreScope(p, plan, object, g); err != nil {
			return err
		}
	}
	if plan.Action == query.Insert {
		plan.Return = false // an insert answers its rows where the dialect can
	}
	if plan.Return {
		if plan.Action != query.Update && plan.Action != query.Delete {
			return fault.New(fault.Invalid, "return=rows is only valid on a write")
		}
		rd, err := e.authz.Decide(p.ProjectID, p.Roles, object, query.Read)
		if err != nil {
			return err
		}
		if !rd.Allowed {
			return permissions.Refusal(p.Roles)
		}
		view := restrict(g.table, rd.Columns)
		plan.Columns = plan.Columns[:0]
		for _, c := range view.Columns {
			plan.Columns = append(plan.Columns, c.Name)
		}
	}
	return nil
}

// ignoreScope sets the Where of an upsert with resolution=ignore to the
// caller's read scope, its values coerced against the table as every scope
// is. The conflicting rows such an insert keeps were not written by the
// caller, so answering them is a read: a dialect whose statement answers
// them (MariaDB) must answer only the rows inside Where; the others never
// answer a kept row and leave Where unused. A caller without read gets no
// rows back at all (execute), so its Where stays nil.
func (e *Engine) ignoreScope(p *auth.Principal, plan *query.Plan, object string, g *grant) error {
	rg, err := e.authz.Authorize(p.Subject(), object, query.Read)
	if err != nil || rg.Scope == nil {
		return nil
	}
	if err := query.Walk(rg.Scope, func(c *query.Cond) error { return coerceCond(c, g.table) }); err != nil {
		return permissions.Refusal(p.Roles)
	}
	plan.Where = rg.Scope
	return nil
}
