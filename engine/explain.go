package engine

import (
	"context"
	"fmt"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

// Gate is one step of an explanation.
type Gate struct {
	Name, Decision, Detail string
}

// Explanation says what Execute would do with a plan, without running it:
// each gate's decision, the grant, and the SQL the dialect would send.
type Explanation struct {
	Object string
	Gates  []Gate
	// Columns the caller may touch for this action (nil: every column).
	Columns []string
	// Stmt is the rendered statement when every gate passed.
	Stmt *dialects.Stmt
	// Outcome is the error Execute would answer with, or nil.
	Outcome error
}

func (x *Explanation) gate(name, decision, format string, args ...any) {
	if x == nil {
		return
	}
	x.Gates = append(x.Gates, Gate{Name: name, Decision: decision, Detail: fmt.Sprintf(format, args...)})
}

// Explain runs the same steps as Execute up to rendering — tenancy, gates,
// validation, scope — and reports them. Nothing is written: for a scoped
// write the database is only asked to compare the values (see applyScope).
func (e *Engine) Explain(ctx context.Context, p *auth.Principal, plan *query.Plan) *Explanation {
	x := &Explanation{Object: permissions.Object(plan.Type, plan.Schema, plan.Table)}
	if plan.Org != p.Org || plan.Project != p.Project {
		x.gate("tenancy", "refuse", "path %s/%s is not the identity's %s/%s", plan.Org, plan.Project, p.Org, p.Project)
		x.Outcome = fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", plan.Org, plan.Project, p.Org, p.Project)
		return x
	}
	x.gate("tenancy", "pass", "%s/%s", p.Org, p.Project)
	g, err := e.authorize(ctx, p, plan, x.Object, x)
	if err != nil {
		x.Outcome = err
		return x
	}
	for _, c := range g.view.Columns {
		x.Columns = append(x.Columns, c.Name)
	}
	if err := validateNames(plan, g.view, g.names); err != nil {
		x.gate("validation", "refuse", "%s", fault.As(err).Message)
		x.Outcome = err
		return x
	}
	if err := g.applyScope(ctx, plan); err != nil {
		if fault.KindOf(err) == fault.Forbidden {
			x.gate("3 row scope", "refuse", "the written values fall outside the row scope")
		} else {
			x.gate("3 row scope", "refuse", "the database could not check the written values: %s", fault.As(err).Message)
		}
		x.Outcome = err
		return x
	}
	st, err := g.src.Dialect().Render(plan)
	if err != nil {
		x.Outcome = err
		return x
	}
	x.Stmt = &st
	return x
}
