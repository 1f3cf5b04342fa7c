package ma

import (
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The SQL of valid plans is covered by the golden files in package dialects;
// these are the refusals and the forms the golden cases do not show.
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
		{"like two values", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Like, Args: []any{"a", "b"}}}), fault.Invalid},
		{"between one value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Between, Args: []any{1}}}), fault.Invalid},
		{"isnull with value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.IsNull, Args: []any{1}}}), fault.Invalid},
		{"nil cond", users(query.Plan{Where: query.And{(*query.Cond)(nil)}}), fault.Invalid},
		{"nil in and", users(query.Plan{Where: query.And{nil}}), fault.Invalid},
		{"default as filter value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{query.Default{}}}}), fault.Invalid},
		{"empty identifier", users(query.Plan{Columns: []string{""}}), fault.Invalid},
		{"NUL in identifier", users(query.Plan{Columns: []string{"a\x00b"}}), fault.Invalid},
		{"invalid UTF-8 identifier", users(query.Plan{Columns: []string{"a\xffb"}}), fault.Invalid},
		{"identifier too long", users(query.Plan{Columns: []string{strings.Repeat("x", 65)}}), fault.Invalid},
		{"identifier too long in characters", users(query.Plan{Columns: []string{strings.Repeat("é", 65)}}), fault.Invalid},
		{"schema too long", &query.Plan{Action: query.Read, Schema: strings.Repeat("s", 65), Table: "t", Columns: []string{"a"}}, fault.Invalid},
		{"negative limit", users(query.Plan{Limit: -1}), fault.Invalid},
		{"negative offset", users(query.Plan{Limit: 1, Offset: -1}), fault.Invalid},
		{"insert no rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"}}), fault.Invalid},
		{"insert short row", users(query.Plan{Action: query.Insert, Columns: []string{"a", "b"}, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert values without columns", users(query.Plan{Action: query.Insert, Rows: [][]any{{1}}}), fault.Invalid},
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

func TestRenderForms(t *testing.T) {
	and := query.And{&query.Cond{Column: "a", Op: query.Eq, Args: []any{1}}, &query.Cond{Column: "b", Op: query.Eq, Args: []any{2}}}
	or := query.Or{&and}
	tests := []struct {
		name  string
		d     Dialect
		plan  *query.Plan
		want  string
		nargs int
	}{
		{"pointer expressions", Dialect{},
			&query.Plan{Action: query.Read, Schema: "s", Table: "t", Columns: []string{"a"}, Where: &query.Not{X: &or}},
			"SELECT `a` FROM `s`.`t` WHERE NOT (`a` = ? AND `b` = ?)", 2},
		{"offset without limit", Dialect{},
			&query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}, Offset: 3},
			"SELECT `a` FROM `t` LIMIT 18446744073709551615 OFFSET ?", 1},
		{"backticks doubled", Dialect{},
			&query.Plan{Action: query.Read, Schema: "a`b", Table: "``", Columns: []string{"x`"}},
			"SELECT `x``` FROM `a``b`.`````` ", 0},
		{"64 characters", Dialect{},
			&query.Plan{Action: query.Read, Table: "t", Columns: []string{strings.Repeat("é", 64)}},
			"SELECT `" + strings.Repeat("é", 64) + "` FROM `t`", 0},
		{"insert without RETURNING", Dialect{NoReturning: true},
			&query.Plan{Action: query.Insert, Schema: "s", Table: "t", Columns: []string{"a", "b"}, Rows: [][]any{{1, query.Default{}}, {nil, 2}}},
			"INSERT INTO `s`.`t` (`a`, `b`) VALUES (?, DEFAULT), (?, ?)", 3},
		{"default rows without RETURNING", Dialect{NoReturning: true},
			&query.Plan{Action: query.Insert, Table: "t", Rows: [][]any{{}, {}}},
			"INSERT INTO `t` () VALUES (), ()", 0},
		{"update to DEFAULT", Dialect{},
			&query.Plan{Action: query.Update, Table: "t", Set: []query.Assign{{Column: "a", Value: query.Default{}}}, All: true},
			"UPDATE `t` SET `a` = DEFAULT", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.d.Render(tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != strings.TrimSpace(tt.want) || len(st.Args) != tt.nargs {
				t.Fatalf("got %q %v, want %q with %d args", st.SQL, st.Args, tt.want, tt.nargs)
			}
		})
	}
}

func TestChunkRows(t *testing.T) {
	row := []any{1, query.Default{}, 3} // two values bound per row
	rows := make([][]any, 7)
	for i := range rows {
		rows[i] = row
	}
	p := &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b", "c"}, Rows: rows}
	sizes := func(chunks []*query.Plan) []int {
		var out []int
		for _, c := range chunks {
			out = append(out, len(c.Rows))
		}
		return out
	}
	if got := sizes(chunkRows(p, 5, 1<<20)); len(got) != 4 || got[0] != 2 || got[3] != 1 {
		t.Fatalf("by values: chunk sizes %v, want [2 2 2 1]", got)
	}
	if got := chunkRows(p, 100, 1<<20); len(got) != 1 || got[0] != p {
		t.Fatalf("a plan that fits must come back as is")
	}
	big := strings.Repeat("x", 1000)
	p.Rows = [][]any{{big, 1, 2}, {big, 1, 2}, {big, 1, 2}}
	if got := sizes(chunkRows(p, 100, 2100)); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Fatalf("by bytes: chunk sizes %v, want [2 1]", got)
	}
	p.Rows = [][]any{{strings.Repeat("x", 5000), 1, 2}}
	if got := chunkRows(p, 100, 2100); len(got) != 1 {
		t.Fatalf("a row larger than the budget goes alone")
	}
}
