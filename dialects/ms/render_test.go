package ms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func render(t *testing.T, p *query.Plan) (string, []any) {
	t.Helper()
	st, err := Dialect{}.Render(p)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return st.SQL, st.Args
}

// The SQL of the shared cases is covered by the golden files in package
// dialects; these are the cases particular to SQL Server, and the refusals.
func TestRender(t *testing.T) {
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
	def := query.Default{}
	tests := []struct {
		name string
		plan *query.Plan
		sql  string
		args []any
	}{
		{"placeholders run on from WHERE into OFFSET/FETCH",
			users(query.Plan{Where: query.And{cond("a", query.Eq, 1), cond("b", query.In, 2, 3), cond("c", query.Between, 4, 5)},
				Order: []query.Order{{Column: "a"}}, Limit: 10, Offset: 20}),
			"SELECT [id] FROM [app].[users] WHERE [a] = @p1 AND [b] IN (@p2, @p3) AND [c] BETWEEN @p4 AND @p5 ORDER BY [a] ASC OFFSET @p6 ROWS FETCH NEXT @p7 ROWS ONLY",
			[]any{1, 2, 3, 4, 5, int64(20), int64(10)}},
		{"no order: constant order for paging", users(query.Plan{Limit: 5}),
			"SELECT [id] FROM [app].[users] ORDER BY (SELECT NULL) OFFSET @p1 ROWS FETCH NEXT @p2 ROWS ONLY",
			[]any{int64(0), int64(5)}},
		{"offset without limit", users(query.Plan{Offset: 3}),
			"SELECT [id] FROM [app].[users] ORDER BY (SELECT NULL) OFFSET @p1 ROWS", []any{int64(3)}},
		{"order without paging", users(query.Plan{Order: []query.Order{{Column: "id", Desc: true}}}),
			"SELECT [id] FROM [app].[users] ORDER BY [id] DESC", nil},
		{"no projection, no schema", &query.Plan{Action: query.Read, Table: "t"}, "SELECT * FROM [t]", nil},
		{"brackets doubled", &query.Plan{Action: query.Read, Schema: "s]x", Table: "[t]", Columns: []string{"a]]b", "c d", `e"f`}},
			`SELECT [a]]]]b], [c d], [e"f] FROM [s]]x].[[t]]]`, nil},
		{"like escapes [ in the argument, not in the SQL", users(query.Plan{Where: cond("name", query.Like, `[a-z]\_%`)}),
			`SELECT [id] FROM [app].[users] WHERE [name] LIKE @p1 COLLATE Latin1_General_100_BIN2 ESCAPE '\'`,
			[]any{`\[a-z]\_%`}},
		{"ilike lowers both sides", users(query.Plan{Where: cond("name", query.ILike, "A[b%")}),
			`SELECT [id] FROM [app].[users] WHERE LOWER([name]) LIKE LOWER(@p1) COLLATE Latin1_General_100_BIN2 ESCAPE '\'`,
			[]any{`A\[b%`}},
		{"is true and is false are two-valued", users(query.Plan{Where: query.Not{X: query.Or{cond("a", query.IsTrue), cond("b", query.IsFalse)}}}),
			"SELECT [id] FROM [app].[users] WHERE NOT (([a] = 1 AND [a] IS NOT NULL) OR ([b] = 0 AND [b] IS NOT NULL))", nil},
		{"empty and, empty or, empty in", users(query.Plan{Where: query.Or{query.And{}, query.Or{}, cond("a", query.In), cond("a", query.NotIn)}}),
			"SELECT [id] FROM [app].[users] WHERE 1=1 OR 1=0 OR 1=0 OR 1=1", nil},
		{"not of empty or", users(query.Plan{Where: query.Not{X: query.Or{}}}),
			"SELECT [id] FROM [app].[users] WHERE NOT (1=0)", nil},
		{"null tests", users(query.Plan{Where: query.And{cond("a", query.IsNull), cond("b", query.IsNotNull)}}),
			"SELECT [id] FROM [app].[users] WHERE [a] IS NULL AND [b] IS NOT NULL", nil},
		{"comparisons", users(query.Plan{Where: query.And{cond("a", query.Ne, "x"), cond("a", query.Gt, 1), cond("a", query.Ge, 2), cond("a", query.Lt, 3), cond("a", query.Le, 4)}}),
			"SELECT [id] FROM [app].[users] WHERE [a] <> @p1 AND [a] > @p2 AND [a] >= @p3 AND [a] < @p4 AND [a] <= @p5",
			[]any{"x", 1, 2, 3, 4}},
		{"insert: a column DEFAULT in every row is left out", users(query.Plan{Action: query.Insert, Columns: []string{"id", "name", "n"},
			Rows: [][]any{{def, "a", nil}, {def, "b", def}}}),
			"INSERT INTO [app].[users] ([name], [n]) OUTPUT INSERTED.* VALUES (@p1, NULL), (@p2, DEFAULT)",
			[]any{"a", "b"}},
		{"insert: every cell DEFAULT is DEFAULT VALUES", users(query.Plan{Action: query.Insert, Columns: []string{"id", "n"},
			Rows: [][]any{{def, def}}}),
			"INSERT INTO [app].[users] OUTPUT INSERTED.* DEFAULT VALUES", nil},
		{"insert: NULL is a keyword, bytes are bound", users(query.Plan{Action: query.Insert, Columns: []string{"a", "b"},
			Rows: [][]any{{nil, []byte{1, 2}}}}),
			"INSERT INTO [app].[users] ([a], [b]) OUTPUT INSERTED.* VALUES (NULL, @p1)", []any{[]byte{1, 2}}},
		{"update: NULL and DEFAULT are keywords", users(query.Plan{Action: query.Update,
			Set:   []query.Assign{{Column: "a", Value: nil}, {Column: "b", Value: def}, {Column: "c", Value: true}},
			Where: cond("id", query.Eq, int64(1))}),
			"UPDATE [app].[users] SET [a] = NULL, [b] = DEFAULT, [c] = @p1 WHERE [id] = @p2", []any{true, int64(1)}},
		{"delete", users(query.Plan{Action: query.Delete, Where: query.Or{cond("id", query.Eq, 1), cond("id", query.IsNull)}}),
			"DELETE FROM [app].[users] WHERE [id] = @p1 OR [id] IS NULL", []any{1}},
		{"identifier of 128 characters", &query.Plan{Action: query.Read, Table: strings.Repeat("é", 128), Columns: []string{"a"}},
			"SELECT [a] FROM [" + strings.Repeat("é", 128) + "]", nil},
		{"as many values as SQL Server takes", users(query.Plan{Where: cond("id", query.In, make([]any, maxParams)...)}),
			"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql, args := render(t, tt.plan)
			if tt.sql == "" {
				return // only that it renders
			}
			if sql != tt.sql {
				t.Errorf("SQL\n got %s\nwant %s", sql, tt.sql)
			}
			if !reflect.DeepEqual(args, tt.args) {
				t.Errorf("args %#v, want %#v", args, tt.args)
			}
		})
	}
}

// Render must not change the plan it is given: the like arguments are
// rewritten in the statement only.
func TestRenderKeepsPlan(t *testing.T) {
	c := cond("name", query.Like, "[x]%")
	p := &query.Plan{Action: query.Read, Table: "t", Columns: []string{"name"}, Where: c}
	_, args := render(t, p)
	if c.Args[0] != "[x]%" || args[0] != `\[x]%` {
		t.Fatalf("plan arg %q, bound %q", c.Args[0], args[0])
	}
}

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
	manyRows := make([][]any, maxInsertRows+1)
	for i := range manyRows {
		manyRows[i] = []any{int64(i)}
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
		{"istrue with value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.IsTrue, Args: []any{1}}}), fault.Invalid},
		{"nil cond", users(query.Plan{Where: query.And{(*query.Cond)(nil)}}), fault.Invalid},
		{"nil in and", users(query.Plan{Where: query.And{nil}}), fault.Invalid},
		{"nil not", users(query.Plan{Where: (*query.Not)(nil)}), fault.Invalid},
		{"default as filter value", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{query.Default{}}}}), fault.Invalid},
		{"empty identifier", users(query.Plan{Columns: []string{""}}), fault.Invalid},
		{"NUL in identifier", users(query.Plan{Columns: []string{"a\x00b"}}), fault.Invalid},
		{"invalid UTF-8 identifier", users(query.Plan{Columns: []string{"a\xffb"}}), fault.Invalid},
		{"identifier too long", users(query.Plan{Columns: []string{strings.Repeat("x", 129)}}), fault.Invalid},
		{"identifier too long in UTF-16", users(query.Plan{Columns: []string{strings.Repeat("😀", 65)}}), fault.Invalid},
		{"schema too long", &query.Plan{Action: query.Read, Schema: strings.Repeat("s", 129), Table: "t"}, fault.Invalid},
		{"negative limit", users(query.Plan{Limit: -1}), fault.Invalid},
		{"negative offset", users(query.Plan{Limit: 1, Offset: -1}), fault.Invalid},
		{"insert no rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"}}), fault.Invalid},
		{"insert short row", users(query.Plan{Action: query.Insert, Columns: []string{"a", "b"}, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert values without columns", users(query.Plan{Action: query.Insert, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert: bad identifier in a DEFAULT column", users(query.Plan{Action: query.Insert, Columns: []string{"a", ""},
			Rows: [][]any{{1, query.Default{}}}}), fault.Invalid},
		{"insert several default rows", users(query.Plan{Action: query.Insert, Rows: [][]any{{}, {}}}), fault.Unsupported},
		{"insert several rows all DEFAULT", users(query.Plan{Action: query.Insert, Columns: []string{"a"},
			Rows: [][]any{{query.Default{}}, {query.Default{}}}}), fault.Unsupported},
		{"insert over 1000 rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"}, Rows: manyRows}), fault.TooLarge},
		{"update nothing to set", users(query.Plan{Action: query.Update, All: true}), fault.Invalid},
		{"update without filter", users(query.Plan{Action: query.Update, Set: []query.Assign{{Column: "a", Value: 1}}}), fault.Invalid},
		{"delete without filter", users(query.Plan{Action: query.Delete}), fault.Invalid},
		{"too many values", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.In, Args: make([]any, maxParams+1)}}), fault.TooLarge},
		{"too many values with paging", users(query.Plan{Where: &query.Cond{Column: "id", Op: query.In, Args: make([]any, maxParams-1)}, Limit: 1}), fault.TooLarge},
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
	and := query.And{cond("a", query.Eq, 1), cond("b", query.Eq, 2)}
	or := query.Or{&and, cond("c", query.IsTrue)}
	p := &query.Plan{Action: query.Read, Schema: "s", Table: "t", Columns: []string{"a"}, Where: &query.Not{X: &or}}
	sql, args := render(t, p)
	want := `SELECT [a] FROM [s].[t] WHERE NOT (([a] = @p1 AND [b] = @p2) OR ([c] = 1 AND [c] IS NOT NULL))`
	if sql != want || len(args) != 2 {
		t.Fatalf("got %q %v, want %q", sql, args, want)
	}
}

func TestLikeArg(t *testing.T) {
	tests := []struct{ in, want any }{
		{"abc%", "abc%"},
		{"[", `\[`},
		{"a[b]c", `a\[b]c`},
		{`\[`, `\[`},      // already escaped: left alone
		{`\\[`, `\\\[`},   // an escaped backslash, then a bracket
		{`\%[_`, `\%\[_`}, // escapes of the query package pass through
		{`x\`, `x\`},      // a trailing escape is the server's to refuse
		{"ü[✓", `ü\[✓`},
		{42, 42}, // not a string: bound as is
	}
	for _, tt := range tests {
		if got := likeArg(tt.in); got != tt.want {
			t.Errorf("likeArg(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	// What the query package makes of a request value, end to end.
	if got := likeArg(query.LikePattern(`[50%]*`)); got != `\[50\%]%` {
		t.Errorf("pattern of [50%%]* = %q", got)
	}
}

func TestCheckIdent(t *testing.T) {
	for _, ok := range []string{"a", "select", "a b", "a]b", "Ünïcødé", strings.Repeat("x", 128), strings.Repeat("😀", 64)} {
		if err := checkIdent(ok); err != nil {
			t.Errorf("checkIdent(%q): %v", ok, err)
		}
	}
}

func TestChunkRows(t *testing.T) {
	row := []any{1, query.Default{}, nil, 3} // two values bound per row
	rows := make([][]any, 7)
	for i := range rows {
		rows[i] = row
	}
	p := &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b", "c", "d"}, Rows: rows}
	sizes := func(chunks []*query.Plan) []int {
		var out []int
		for _, c := range chunks {
			out = append(out, len(c.Rows))
		}
		return out
	}
	if got := sizes(chunkRows(p, 5, 100)); !reflect.DeepEqual(got, []int{2, 2, 2, 1}) {
		t.Fatalf("by values: chunk sizes %v, want [2 2 2 1]", got)
	}
	if got := sizes(chunkRows(p, 100, 3)); !reflect.DeepEqual(got, []int{3, 3, 1}) {
		t.Fatalf("by rows: chunk sizes %v, want [3 3 1]", got)
	}
	if got := chunkRows(p, 100, 100); len(got) != 1 || got[0] != p {
		t.Fatalf("a plan that fits must come back as is")
	}
	// Every chunk renders within both limits.
	big := make([][]any, 2500)
	for i := range big {
		big[i] = []any{int64(i), "x"}
	}
	bp := &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b"}, Rows: big}
	total := 0
	for _, c := range chunkRows(bp, maxParams, maxInsertRows) {
		st, err := Dialect{}.Render(c)
		if err != nil {
			t.Fatal(err)
		}
		total += len(c.Rows)
		if len(st.Args) > maxParams || len(c.Rows) > maxInsertRows {
			t.Fatalf("chunk of %d rows, %d values", len(c.Rows), len(st.Args))
		}
	}
	if total != len(big) {
		t.Fatalf("chunks hold %d rows, want %d", total, len(big))
	}
}
