package pg

import (
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The SQL of valid plans is covered by the golden files in package dialects;
// these are the refusals.
func TestRenderErrors(t *testing.T) {
	users := func(p query.Plan) *query.Plan {
		p.Schema, p.Table = "app", "users"
		if p.Action == 0 {
			p.Action = query.Read
		}
		if p.Action == query.Read && p.Columns == nil {
			p.Columns = []string{"id"}
		}
		return &p
	}
	tests := []struct {
		name string
		plan *query.Plan
		kind fault.Kind
	}{
		{"nil plan", nil, fault.Invalid},
		{"unknown action", &query.Plan{Action: 9, Table: "t"}, fault.Unsupported},
		{"unknown operator", users(query.Plan{Where: &query.Cond{Column: "id", Op: "regex", Args: []any{"x"}}}), fault.Unsupported},
		{"eq without value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Eq}}), fault.Invalid},
		{"between one value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Between, Args: []any{1}}}), fault.Invalid},
		{"isnull with value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.IsNull, Args: []any{1}}}), fault.Invalid},
		{"nil cond", users(query.Plan{Where: query.And{(*query.Cond)(nil)}}), fault.Invalid},
		{"nil in and", users(query.Plan{Where: query.And{nil}}), fault.Invalid},
		{"default as filter value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{query.Default{}}}}), fault.Invalid},
		{"empty identifier", users(query.Plan{Columns: []string{""}}), fault.Invalid},
		{"NUL in identifier", users(query.Plan{Columns: []string{"a\x00b"}}), fault.Invalid},
		{"identifier too long", users(query.Plan{Columns: []string{strings.Repeat("x", 64)}}), fault.Invalid},
		{"negative limit", users(query.Plan{Limit: -1}), fault.Invalid},
		{"negative offset", users(query.Plan{Limit: 1, Offset: -1}), fault.Invalid},
		{"insert no rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"}}), fault.Invalid},
		{"insert short row", users(query.Plan{Action: query.Insert, Columns: []string{"a", "b"}, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert values without columns", users(query.Plan{Action: query.Insert, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert several default rows", users(query.Plan{Action: query.Insert, Rows: [][]any{{}, {}}}), fault.Unsupported},
		{"update nothing to set", users(query.Plan{Action: query.Update, All: true}), fault.Invalid},
		{"update without filter", users(query.Plan{Action: query.Update, Set: []query.Assign{{Column: "a", Value: 1}}}), fault.Invalid},
		{"delete without filter", users(query.Plan{Action: query.Delete}), fault.Invalid},
		{"too many values", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.In, Args: make([]any, maxParams+1)}}), fault.TooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Dialect{}.Render(tt.plan)
			if err == nil {
				t.Fatalf("Render = %q, want a %s fault", st.SQL, tt.kind)
			}
			if got := fault.KindOf(err); got != tt.kind {
				t.Fatalf("kind = %s, want %s (%v)", got, tt.kind, err)
			}
		})
	}
}

func TestRenderPointerExprs(t *testing.T) {
	and := query.And{&query.Cond{Column: "a", Op: query.Eq, Args: []any{1}}, &query.Cond{Column: "b", Op: query.Eq, Args: []any{2}}}
	or := query.Or{&and}
	p := &query.Plan{Action: query.Read, Schema: "s", Table: "t", Columns: []string{"a"}, Where: &query.Not{X: &or}}
	st, err := Dialect{}.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT "a" FROM "s"."t" WHERE NOT ("a" = $1 AND "b" = $2)`
	if st.SQL != want || len(st.Args) != 2 {
		t.Fatalf("got %q %v, want %q", st.SQL, st.Args, want)
	}
}

func TestRenderOffsetWithoutLimit(t *testing.T) {
	st, err := Dialect{}.Render(&query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT "a" FROM "t" OFFSET $1`; st.SQL != want {
		t.Fatalf("got %q, want %q", st.SQL, want)
	}
}

func TestChunkRows(t *testing.T) {
	row := []any{1, query.Default{}, 3} // two values bound per row
	rows := make([][]any, 7)
	for i := range rows {
		rows[i] = row
	}
	p := &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b", "c"}, Rows: rows}
	chunks := chunkRows(p, 5) // two rows (4 values) per chunk
	var sizes []int
	for _, c := range chunks {
		sizes = append(sizes, len(c.Rows))
	}
	if len(sizes) != 4 || sizes[0] != 2 || sizes[1] != 2 || sizes[2] != 2 || sizes[3] != 1 {
		t.Fatalf("chunk sizes %v, want [2 2 2 1]", sizes)
	}
	if got := chunkRows(p, 100); len(got) != 1 || got[0] != p {
		t.Fatalf("a plan that fits must come back as is")
	}
}

// BenchmarkRenderByKey renders the read of one row by key, every column
// named: the statement of a REST GET by primary key.
func BenchmarkRenderByKey(b *testing.B) {
	plan := &query.Plan{Action: query.Read, Schema: "apibench_1234567890", Table: "items",
		Columns: []string{"id", "name", "price", "qty", "active", "created", "note", "grp"},
		Where:   &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(7)}}, Limit: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Dialect{}).Render(plan); err != nil {
			b.Fatal(err)
		}
	}
}
