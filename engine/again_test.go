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
	for _, where := range planWheres {
		orig := freshRead(where)
		var a readAgain
		a.keep(orig)
		changeInPlace(orig)
		c := a.read()
		if !reflect.DeepEqual(c, freshRead(where)) || !reflect.DeepEqual(c, clonePlan(freshRead(where))) {
			t.Fatalf("kept %+v, want %+v", c, freshRead(where))
		}
		changeInPlace(c)
		if c = a.read(); !reflect.DeepEqual(c, freshRead(where)) {
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
