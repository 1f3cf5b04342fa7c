package engine

import (
	"context"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// EstimateExactBelow is the estimate under which count=estimated counts
// exactly: a small total is cheap to count and worth being right.
const EstimateExactBelow = 100_000

// countAlias names the count of an exact count's aggregate read.
const countAlias = "__minimal_total"

// Count answers the total of a plain read's rows, every filter and the row
// scope applied, ignoring its page, projection and order. plan is the
// request part of the read (a fresh plan: Execute changes the one it
// runs); its Count is the mode:
//
//   - exact: COUNT(*) as an aggregate read through Execute (every gate,
//     audited as a read).
//   - planned: the database planner's estimate (dialects.Estimator); a
//     database without one counts exactly.
//   - estimated: planned, but exact when the estimate is under
//     EstimateExactBelow.
func (e *Engine) Count(ctx context.Context, p *auth.Principal, plan *query.Plan) (int64, error) {
	if plan.IsAggregate() {
		return 0, fault.New(fault.Invalid, "count is for a plain read: an aggregate read answers count() itself")
	}
	plan.Columns, plan.Order, plan.Limit, plan.Offset = nil, nil, 0, 0
	if plan.Count == query.CountPlanned || plan.Count == query.CountEstimated {
		n, ok, err := e.estimate(ctx, p, plan)
		if err != nil {
			return 0, err
		}
		if ok && (plan.Count == query.CountPlanned || n >= EstimateExactBelow) {
			return n, nil
		}
	}
	cp := *plan
	cp.Columns = nil
	cp.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: countAlias}}
	res, err := e.Execute(ctx, p, &cp)
	if err != nil {
		return 0, err
	}
	defer res.Rows.Close()
	if !res.Rows.Next() {
		if err := res.Rows.Err(); err != nil {
			return 0, err
		}
		return 0, fault.New(fault.Internal, "count answered no row")
	}
	vals, err := res.Rows.Values()
	if err != nil {
		return 0, err
	}
	return dialects.CountCell(vals[0])
}

// estimate runs the plan through the gates like Execute and asks the
// source's planner; ok is false when the source has no estimator.
func (e *Engine) estimate(ctx context.Context, p *auth.Principal, plan *query.Plan) (n int64, ok bool, err error) {
	start := time.Now()
	object := permissions.Object(plan.Type, plan.Schema, plan.Table)
	defer func() {
		if ok || err != nil {
			e.audit(ctx, p, plan, object, 0, err, start)
		}
	}()
	if p == nil {
		return 0, false, fault.New(fault.Unauthenticated, "missing access token")
	}
	if plan.Org != p.Org || plan.Project != p.Project {
		return 0, false, fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", plan.Org, plan.Project, p.Org, p.Project)
	}
	g, err := e.authorize(ctx, p, plan, object, nil)
	if err != nil {
		return 0, false, err
	}
	est, ok := g.src.(dialects.Estimator)
	if !ok {
		return 0, false, nil
	}
	cp := *plan
	cp.Where = cloneExpr(plan.Where)
	if err := validateNames(&cp, g.view, g.names); err != nil {
		return 0, false, err
	}
	if err := g.applyScope(ctx, &cp); err != nil {
		return 0, false, err
	}
	n, err = est.Estimate(ctx, &cp)
	return n, err == nil, err
}

// condCopy is a copy of a condition with room for one value: a condition
// of at most one value (most of them) is copied in one allocation.
type condCopy struct {
	c   query.Cond
	arg [1]any
}

// copyCond copies x into cc and returns the copy.
func copyCond(cc *condCopy, x *query.Cond) *query.Cond {
	cc.c = *x
	switch len(x.Args) {
	case 0:
		cc.c.Args = nil
	case 1:
		cc.arg[0] = x.Args[0]
		cc.c.Args = cc.arg[:1:1]
	default:
		cc.c.Args = append([]any(nil), x.Args...)
	}
	return &cc.c
}

// cloneExpr copies an expression and its conditions, so that validating
// one plan (which coerces values in place) leaves the other as parsed.
func cloneExpr(e query.Expr) query.Expr {
	switch x := e.(type) {
	case *query.Cond:
		return copyCond(new(condCopy), x)
	case query.Not:
		return query.Not{X: cloneExpr(x.X)}
	case query.And:
		out := make(query.And, len(x))
		for i, it := range x {
			out[i] = cloneExpr(it)
		}
		return out
	case query.Or:
		out := make(query.Or, len(x))
		for i, it := range x {
			out[i] = cloneExpr(it)
		}
		return out
	}
	return e
}
