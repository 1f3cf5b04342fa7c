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
	for _, where := range planWheres {
		orig := freshRead(where)
		c := clonePlan(orig)
		if !reflect.DeepEqual(c, orig) {
			t.Fatalf("copy %+v, want %+v", c, orig)
		}
		changeInPlace(c)
		if !reflect.DeepEqual(orig, freshRead(where)) {
			t.Errorf("changing the copy changed the plan: %+v", orig)
		}
		orig = freshRead(where)
		c = clonePlan(orig)
		changeInPlace(orig)
		if !reflect.DeepEqual(c, freshRead(where)) {
			t.Errorf("changing the plan changed the copy: %+v", c)
		}
	}
}

// planWheres are the conditions the plan copy tests run over: a lone
// condition of one, no and several values, a negation, a tree and none.
var planWheres = []func() query.Expr{
	func() query.Expr { return &query.Cond{Column: "id", Op: query.Eq, Args: []any{"7"}} },
	func() query.Expr { return &query.Cond{Column: "id", Op: query.IsNull} },
	func() query.Expr { return &query.Cond{Column: "id", Op: query.In, Args: []any{"1", "2", "3"}} },
	func() query.Expr { return query.Not{X: &query.Cond{Column: "id", Op: query.Eq, Args: []any{"7"}}} },
	func() query.Expr {
		return query.And{&query.Cond{Column: "a", Op: query.Eq, Args: []any{"1"}},
			query.Not{X: query.Or{&query.Cond{Column: "b", Op: query.Between, Args: []any{"1", "2"}}}}}
	},
	func() query.Expr { return nil },
}

// freshRead is a read plan with where's condition, made anew each call.
func freshRead(where func() query.Expr) *query.Plan {
	return &query.Plan{Action: query.Read, Org: "o", Project: "p", Type: "pg", Schema: "s", Table: "t",
		Where: where(), Order: []query.Order{{Column: "a"}}, Limit: 1, Offset: 2, Count: query.CountExact}
}

// changeInPlace changes p as a run does: coerced values, an expanded
// projection, the order's column, an ANDed scope.
func changeInPlace(p *query.Plan) {
	_ = query.Walk(p.Where, func(x *query.Cond) error {
		for i := range x.Args {
			x.Args[i] = int64(99)
		}
		x.Column = "changed"
		return nil
	})
	p.Columns = append(p.Columns, "expanded")
	p.Order[0].Column = "changed"
	p.Where = andWhere(p.Where, &query.Cond{Column: "scope", Op: query.IsNull})
}
