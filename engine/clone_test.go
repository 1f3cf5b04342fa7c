package engine

import (
	"reflect"
	"testing"

	"github.com/littlebitlabs/minimal/query"
)

// TestClonePlanIsApart: a read plan's copy equals it, and validating,
// expanding and scoping either in place (coerced values, a projection, an
// ANDed scope) leaves the other as it was, for a lone condition of no,
// one or several values and for a tree of them.
func TestClonePlanIsApart(t *testing.T) {
	wheres := []func() query.Expr{
		func() query.Expr { return &query.Cond{Column: "id", Op: query.Eq, Args: []any{"7"}} },
		func() query.Expr { return &query.Cond{Column: "id", Op: query.IsNull} },
		func() query.Expr { return &query.Cond{Column: "id", Op: query.In, Args: []any{"1", "2", "3"}} },
		func() query.Expr {
			return query.And{&query.Cond{Column: "a", Op: query.Eq, Args: []any{"1"}},
				query.Not{X: query.Or{&query.Cond{Column: "b", Op: query.Between, Args: []any{"1", "2"}}}}}
		},
		func() query.Expr { return nil },
	}
	fresh := func(where func() query.Expr) *query.Plan {
		return &query.Plan{Action: query.Read, Table: "t", Where: where(), Order: []query.Order{{Column: "a"}}, Limit: 1}
	}
	change := func(p *query.Plan) {
		_ = query.Walk(p.Where, func(x *query.Cond) error {
			for i := range x.Args {
				x.Args[i] = int64(99)
			}
			x.Column = "changed"
			return nil
		})
		p.Order[0].Column = "changed"
		p.Where = andWhere(p.Where, &query.Cond{Column: "scope", Op: query.IsNull})
	}
	for _, where := range wheres {
		orig := fresh(where)
		c := clonePlan(orig)
		if !reflect.DeepEqual(c, orig) {
			t.Fatalf("copy %+v, want %+v", c, orig)
		}
		change(c)
		if !reflect.DeepEqual(orig, fresh(where)) {
			t.Errorf("changing the copy changed the plan: %+v", orig)
		}
		orig = fresh(where)
		c = clonePlan(orig)
		change(orig)
		if !reflect.DeepEqual(c, fresh(where)) {
			t.Errorf("changing the plan changed the copy: %+v", c)
		}
	}
}
