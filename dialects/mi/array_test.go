package mi_test

import (
	"testing"

	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestRenderArrayContains: the array operators render as EXISTS over
// json_each with the path and the element bound; a row column, a missing
// value and a nested value are refused; pg refuses the operator as
// unsupported.
func TestRenderArrayContains(t *testing.T) {
	read := func(c *query.Cond) *query.Plan {
		return &query.Plan{Action: query.Read, Type: "mi", Schema: "app", Table: "emo", Where: c}
	}
	st, err := mi.Dialect{}.Render(read(&query.Cond{Column: "tags", Op: query.ArrayNotContains, Args: []any{true}}))
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT id, data, created_at, updated_at FROM rows WHERE NOT EXISTS (SELECT 1 FROM json_each(data, ?) WHERE value = ?)"
	if st.SQL != want || len(st.Args) != 2 || st.Args[0] != `$."tags"` || st.Args[1] != int64(1) {
		t.Fatalf("got %s %v", st.SQL, st.Args)
	}
	for _, c := range []*query.Cond{
		{Column: "id", Op: query.ArrayContains, Args: []any{"x"}},
		{Column: "tags", Op: query.ArrayContains},
		{Column: "tags", Op: query.ArrayContains, Args: []any{nil}},
		{Column: "tags", Op: query.ArrayContains, Args: []any{[]any{"x"}}},
		{Column: "tags", Op: query.ArrayContains, Args: []any{map[string]any{"a": "x"}}},
	} {
		if _, err := (mi.Dialect{}).Render(read(c)); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%+v: %v, want invalid", c, err)
		}
	}
	pgPlan := &query.Plan{Action: query.Read, Type: "pg", Schema: "app", Table: "emo", Columns: []string{"id"},
		Where: &query.Cond{Column: "tags", Op: query.ArrayContains, Args: []any{"x"}}}
	if _, err := (pg.Dialect{}).Render(pgPlan); fault.KindOf(err) != fault.Unsupported {
		t.Fatalf("pg: %v, want unsupported", err)
	}
}
