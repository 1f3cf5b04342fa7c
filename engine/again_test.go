package engine

import (
	"reflect"
	"testing"

	"github.com/littlebitlabs/minimal/query"
)

// TestReadAgainIsApart: the read a readAgain keeps is the plan as given,
// equal to its clonePlan copy, however the run changes that plan in place
// (coerced values, a projection, an ANDed scope), for a lone condition of
// no, one or several values, a tree of them and none; and each plan it
// makes is apart from the next.
func TestReadAgainIsApart(t *testing.T) {
	wheres := []func() query.Expr{
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
	fresh := func(where func() query.Expr) *query.Plan {
		return &query.Plan{Action: query.Read, Org: "o", Project: "p", Type: "pg", Schema: "s", Table: "t",
			Where: where(), Order: []query.Order{{Column: "a"}}, Limit: 1, Offset: 2, Count: query.CountExact}
	}
	change := func(p *query.Plan) {
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
	for _, where := range wheres {
		orig := fresh(where)
		var a readAgain
		a.keep(orig)
		change(orig)
		c := a.read()
		if !reflect.DeepEqual(c, fresh(where)) || !reflect.DeepEqual(c, clonePlan(fresh(where))) {
			t.Fatalf("kept %+v, want %+v", c, fresh(where))
		}
		change(c)
		if c = a.read(); !reflect.DeepEqual(c, fresh(where)) {
			t.Errorf("changing a plan read again changed the next: %+v", c)
		}
	}
}

// TestReadAgainStaysInFrame: keeping a read by key allocates nothing; its
// copy is made only when the read is run again.
func TestReadAgainStaysInFrame(t *testing.T) {
	p := &query.Plan{Action: query.Read, Table: "t", Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{"7"}}, Limit: 1}
	if n := testing.AllocsPerRun(100, func() {
		var a readAgain
		a.keep(p)
		if !a.lone {
			t.Fatal("not kept apart")
		}
	}); n != 0 {
		t.Errorf("keep allocates %v times", n)
	}
}
