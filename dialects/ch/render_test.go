package ch

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

// The SQL of valid type-blind plans is covered by the golden files in
// package dialects; these are the refusals.
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
		{"unknown operator", users(query.Plan{Where: cond("id", "regex", "x")}), fault.Unsupported},
		{"eq without value", users(query.Plan{Where: cond("id", query.Eq)}), fault.Invalid},
		{"between one value", users(query.Plan{Where: cond("id", query.Between, 1)}), fault.Invalid},
		{"negated between one value", users(query.Plan{Where: query.Not{X: cond("id", query.Between, 1)}}), fault.Invalid},
		{"isnull with value", users(query.Plan{Where: cond("id", query.IsNull, 1)}), fault.Invalid},
		{"istrue with value", users(query.Plan{Where: cond("id", query.IsTrue, 1)}), fault.Invalid},
		{"like without value", users(query.Plan{Where: cond("id", query.Like)}), fault.Invalid},
		{"nil cond", users(query.Plan{Where: query.And{(*query.Cond)(nil)}}), fault.Invalid},
		{"nil in and", users(query.Plan{Where: query.And{nil}}), fault.Invalid},
		{"nil not", users(query.Plan{Where: (*query.Not)(nil)}), fault.Invalid},
		{"default as filter value", users(query.Plan{Where: cond("id", query.Eq, query.Default{})}), fault.Invalid},
		{"empty identifier", users(query.Plan{Columns: []string{""}}), fault.Invalid},
		{"NUL in identifier", users(query.Plan{Columns: []string{"a\x00b"}}), fault.Invalid},
		{"negative limit", users(query.Plan{Limit: -1}), fault.Invalid},
		{"negative offset", users(query.Plan{Limit: 1, Offset: -1}), fault.Invalid},
		{"query parameter look-alike", users(query.Plan{Columns: []string{"{a:b}"}, Where: cond("id", query.Eq, 1)}), fault.Unsupported},
		{"insert no rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"}}), fault.Invalid},
		{"insert short row", users(query.Plan{Action: query.Insert, Columns: []string{"a", "b"}, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert values without columns", users(query.Plan{Action: query.Insert, Rows: [][]any{{1}}}), fault.Invalid},
		{"insert only defaults", users(query.Plan{Action: query.Insert, Columns: []string{"a"}, Rows: [][]any{{query.Default{}}}}), fault.Unsupported},
		{"insert no columns", users(query.Plan{Action: query.Insert, Rows: [][]any{{}}}), fault.Unsupported},
		{"insert mixed default without types", users(query.Plan{Action: query.Insert, Columns: []string{"a"},
			Rows: [][]any{{1}, {query.Default{}}}}), fault.Unsupported},
		{"insert too many rows", users(query.Plan{Action: query.Insert, Columns: []string{"a"},
			Rows: make([][]any, maxInsertRows+1)}), fault.TooLarge},
		{"update nothing to set", users(query.Plan{Action: query.Update, All: true}), fault.Invalid},
		{"update without filter", users(query.Plan{Action: query.Update, Set: []query.Assign{{Column: "a", Value: 1}}}), fault.Invalid},
		{"update default without types", users(query.Plan{Action: query.Update, All: true,
			Set: []query.Assign{{Column: "a", Value: query.Default{}}}}), fault.Unsupported},
		{"delete without filter", users(query.Plan{Action: query.Delete}), fault.Invalid},
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

func TestRenderCountErrors(t *testing.T) {
	for _, p := range []*query.Plan{
		nil,
		{Action: query.Read, Table: "t"},
		{Action: query.Delete, Table: "t"},
		{Action: query.Update, Table: "t", All: true},
	} {
		if _, err := renderCount(p, nil); fault.KindOf(err) != fault.Invalid {
			t.Errorf("renderCount(%+v): %v, want Invalid", p, err)
		}
	}
}

func TestRenderIdentifiers(t *testing.T) {
	p := &query.Plan{Action: query.Read, Schema: "my db", Table: "a`b", Columns: []string{`c\d`, "?", "x`"}, Offset: 3}
	st, err := Dialect{}.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT `c\\\\d`, `?`, `x\\`` FROM `my db`.`a\\`b` LIMIT ? OFFSET ?"
	if st.SQL != want {
		t.Fatalf("got  %s\nwant %s", st.SQL, want)
	}
	if !reflect.DeepEqual(st.Args, []any{int64(1 << 62), int64(3)}) {
		t.Fatalf("args %v", st.Args)
	}
}

// TestRenderNegation checks that NOT is pushed down to the comparisons with
// SQL's NULL rules (see builder.WriteCond).
func TestRenderNegation(t *testing.T) {
	tests := []struct {
		name  string
		where query.Expr
		want  string
		args  []any
	}{
		{"eq", query.Not{X: cond("a", query.Eq, 1)}, "`a` <> ?", []any{1}},
		{"lt", query.Not{X: cond("a", query.Lt, 1)}, "`a` >= ?", []any{1}},
		{"ge", query.Not{X: cond("a", query.Ge, 1)}, "`a` < ?", []any{1}},
		{"isnull", query.Not{X: cond("a", query.IsNull)}, "`a` IS NOT NULL", nil},
		{"notnull", query.Not{X: cond("a", query.IsNotNull)}, "`a` IS NULL", nil},
		{"like", query.Not{X: cond("a", query.Like, "x%")}, "`a` NOT LIKE ?", []any{"x%"}},
		{"ilike", query.Not{X: cond("a", query.ILike, "x%")}, "lowerUTF8(`a`) NOT LIKE lowerUTF8(?)", []any{"x%"}},
		{"in", query.Not{X: cond("a", query.In, 1, 2)}, "`a` NOT IN (?, ?) AND `a` IS NOT NULL", []any{1, 2}},
		{"nin", query.Not{X: cond("a", query.NotIn, 1)}, "`a` IN (?)", []any{1}},
		{"empty in", query.Not{X: cond("a", query.In)}, "1", nil},
		{"empty nin", query.Not{X: cond("a", query.NotIn)}, "0", nil},
		{"between", query.Not{X: cond("a", query.Between, 1, 2)}, "`a` < ? OR `a` > ?", []any{1, 2}},
		{"istrue", query.Not{X: cond("a", query.IsTrue)}, "`a` IS NULL OR `a` = 0", nil},
		{"isfalse", query.Not{X: cond("a", query.IsFalse)}, "`a` IS NULL OR `a` = 1", nil},
		{"and", query.Not{X: query.And{cond("a", query.Eq, 1), cond("b", query.Gt, 2)}}, "`a` <> ? OR `b` <= ?", []any{1, 2}},
		{"or", query.Not{X: query.Or{cond("a", query.Eq, 1), cond("b", query.IsNull)}}, "`a` <> ? AND `b` IS NOT NULL", []any{1}},
		{"nested", query.And{cond("c", query.Eq, 3), query.Not{X: query.Or{cond("a", query.Between, 1, 2), cond("b", query.IsTrue)}}},
			"`c` = ? AND ((`a` < ? OR `a` > ?) AND (`b` IS NULL OR `b` = 0))", []any{3, 1, 2}},
		{"double", &query.Not{X: query.Not{X: cond("a", query.Eq, 1)}}, "`a` = ?", []any{1}},
		{"empty and", query.Not{X: query.And{}}, "0", nil},
		{"empty or", query.Not{X: query.Or{}}, "1", nil},
		{"pointers", &query.Not{X: &query.Or{&query.And{cond("a", query.Eq, 1)}}}, "`a` <> ?", []any{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Dialect{}.Render(&query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: tt.where})
			if err != nil {
				t.Fatal(err)
			}
			if want := "SELECT `a` FROM `t` WHERE " + tt.want; st.SQL != want {
				t.Errorf("got  %s\nwant %s", st.SQL, want)
			}
			if len(st.Args) != len(tt.args) || len(tt.args) > 0 && !reflect.DeepEqual(st.Args, tt.args) {
				t.Errorf("args %v, want %v", st.Args, tt.args)
			}
		})
	}
}

// typedTable is a table of every kind of column the typed rendering treats
// apart.
func typedTable() *tableInfo {
	cols := map[string]*colInfo{}
	add := func(name, typ, kind, expr string) {
		cols[name] = &colInfo{typ: parseType(typ), defaultKind: kind, defaultExpr: expr}
	}
	add("id", "Int64", "", "")
	add("i8", "Int8", "", "")
	add("u32", "Nullable(UInt32)", "", "")
	add("u64", "UInt64", "", "")
	add("dec", "Nullable(Decimal(20, 6))", "", "")
	add("f", "Float64", "", "")
	add("s", "String", "", "")
	add("lc", "LowCardinality(Nullable(String))", "", "")
	add("fs", "FixedString(3)", "", "")
	add("e", "Enum8('a' = 1, 'b' = 2)", "", "")
	add("u", "Nullable(UUID)", "", "")
	add("d", "Date", "", "")
	add("dt", "DateTime('Europe/Berlin')", "", "")
	add("dt6", "Nullable(DateTime64(6, 'UTC'))", "", "")
	add("b", "Nullable(Bool)", "", "")
	add("arr", "Array(Int32)", "", "")
	add("n", "Nullable(Int64)", "DEFAULT", "CAST(7, 'Nullable(Int64)')")
	add("m", "Int64", "", "")
	return &tableInfo{cols: cols}
}

func TestRenderTyped(t *testing.T) {
	info := typedTable()
	ts := time.Date(2024, 2, 29, 21, 59, 59, 123456789, time.UTC)
	tests := []struct {
		name string
		plan *query.Plan
		sql  string
		args []any
	}{
		{"filters", &query.Plan{Action: query.Read, Table: "t", Columns: []string{"id"}, Where: query.And{
			cond("dec", query.Gt, "1.5"),
			cond("u64", query.Eq, "18446744073709551615"),
			cond("u64", query.In, int64(1)),
			cond("fs", query.Eq, "ab"),
			cond("dt", query.Lt, "2024-02-29T23:59:59.5+02:00"),
			cond("dt6", query.Ge, ts),
			cond("u", query.Eq, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"),
			cond("d", query.Between, "2024-01-01", "2024-12-31"),
			cond("i8", query.Eq, int64(1000)),
			cond("s", query.NotIn, "x"),
			cond("lc", query.NotIn, "x"),
			cond("e", query.Like, "a%"),
			cond("fs", query.ILike, "A%"),
			query.Not{X: cond("b", query.IsTrue)},
			query.Not{X: cond("f", query.Eq, 1.5)},
		}},
			"SELECT `id` FROM `t` WHERE `dec` > CAST(? AS Decimal(20, 6)) AND `u64` = CAST(? AS UInt64) AND `u64` IN (CAST(? AS UInt64))" +
				" AND `fs` = CAST(? AS FixedString(3)) AND `dt` < toDateTime(?, 'UTC') AND `dt6` >= toDateTime64(?, 6, 'UTC')" +
				" AND `u` = ? AND `d` BETWEEN ? AND ? AND `i8` = ? AND `s` NOT IN (?) AND (`lc` NOT IN (?) AND `lc` IS NOT NULL)" +
				" AND toString(`e`) LIKE ? AND lowerUTF8(toString(`fs`)) LIKE lowerUTF8(?) AND (`b` IS NULL OR `b` = 0) AND `f` <> ?",
			[]any{"1.5", "18446744073709551615", "1", "ab", "2024-02-29 21:59:59", "2024-02-29 21:59:59.123456",
				"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "2024-01-01", "2024-12-31", int64(1000), "x", "x", "a%", "A%", 1.5}},
		{"insert", &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"id", "u", "dt", "n", "s", "arr", "lc", "u32"},
			Rows: [][]any{
				{int64(1), "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "2024-02-29T23:59:59+02:00", query.Default{}, query.Default{}, []any{int64(1)}, "x", query.Default{}},
				{int64(2), nil, ts, int64(5), query.Default{}, query.Default{}, nil, int64(4294967295)},
			}},
			"INSERT INTO `t` (`id`, `u`, `dt`, `n`, `arr`, `lc`, `u32`)" +
				" SELECT CAST(? AS Int64), toNullable(toUUID(?)), CAST(toDateTime(?, 'UTC') AS DateTime('Europe/Berlin'))," +
				" CAST((CAST(7, 'Nullable(Int64)')) AS Nullable(Int64)), CAST(? AS Array(Int32)), CAST(? AS Nullable(String)), CAST(NULL AS Nullable(UInt32))" +
				" UNION ALL SELECT CAST(? AS Int64), CAST(? AS Nullable(UUID)), CAST(toDateTime(?, 'UTC') AS DateTime('Europe/Berlin'))," +
				" CAST(? AS Nullable(Int64)), CAST([] AS Array(Int32)), CAST(? AS Nullable(String)), CAST(? AS Nullable(UInt32))",
			[]any{int64(1), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "2024-02-29 21:59:59", []any{int64(1)}, "x",
				int64(2), nil, "2024-02-29 21:59:59", int64(5), nil, int64(4294967295)}},
		{"insert default without expression", &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"m", "d"},
			Rows: [][]any{{query.Default{}, "2024-01-01"}, {int64(3), "2024-01-02"}}},
			"INSERT INTO `t` (`m`, `d`) SELECT assumeNotNull(CAST(NULL AS Nullable(Int64))), CAST(? AS Date)" +
				" UNION ALL SELECT CAST(? AS Int64), CAST(? AS Date)",
			[]any{"2024-01-01", int64(3), "2024-01-02"}},
		{"update", &query.Plan{Action: query.Update, Table: "t", Where: cond("id", query.Eq, int64(1)),
			Set: []query.Assign{{Column: "dec", Value: "2.5"}, {Column: "m", Value: query.Default{}}, {Column: "n", Value: query.Default{}}, {Column: "u", Value: nil}}},
			"ALTER TABLE `t` UPDATE `dec` = materialize(CAST(? AS Nullable(Decimal(20, 6)))), `m` = materialize(defaultValueOfArgumentType(`m`))," +
				" `n` = materialize(CAST((CAST(7, 'Nullable(Int64)')) AS Nullable(Int64))), `u` = materialize(CAST(? AS Nullable(UUID)))" +
				" WHERE ifNull(`id` = ?, 0)",
			[]any{"2.5", nil, int64(1)}},
		{"delete all", &query.Plan{Action: query.Delete, Table: "t", All: true}, "ALTER TABLE `t` DELETE WHERE 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := render(tt.plan, info)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.sql {
				t.Errorf("got  %s\nwant %s", st.SQL, tt.sql)
			}
			if !reflect.DeepEqual(st.Args, tt.args) {
				t.Errorf("args\n got %#v\nwant %#v", st.Args, tt.args)
			}
		})
	}
}

func TestRenderCount(t *testing.T) {
	info := typedTable()
	tests := []struct {
		name string
		plan *query.Plan
		sql  string
		args []any
	}{
		{"delete", &query.Plan{Action: query.Delete, Table: "t", Where: query.Not{X: cond("n", query.Eq, int64(1))}},
			"SELECT count() FROM `t` WHERE ifNull(`n` <> ?, 0)", []any{int64(1)}},
		{"delete all", &query.Plan{Action: query.Delete, Table: "t", All: true}, "SELECT count() FROM `t`", nil},
		{"update", &query.Plan{Action: query.Update, Table: "t", Where: query.Or{cond("id", query.Eq, int64(1)), cond("n", query.IsNull)},
			Set: []query.Assign{{Column: "n", Value: int64(8)}, {Column: "s", Value: "x"}}},
			"SELECT count() FROM `t` WHERE ifNull(`id` = ? OR `n` IS NULL, 0) AND NOT ignore(" +
				"if(ifNull(`id` = ? OR `n` IS NULL, 0), materialize(CAST(? AS Nullable(Int64))), `n`), " +
				"if(ifNull(`id` = ? OR `n` IS NULL, 0), materialize(CAST(? AS String)), `s`))",
			[]any{int64(1), int64(1), int64(8), int64(1), "x"}},
		{"update all", &query.Plan{Action: query.Update, Table: "t", All: true, Set: []query.Assign{{Column: "m", Value: int64(2)}}},
			"SELECT count() FROM `t` WHERE NOT ignore(if(1, materialize(CAST(? AS Int64)), `m`))", []any{int64(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := renderCount(tt.plan, info)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.sql {
				t.Errorf("got  %s\nwant %s", st.SQL, tt.sql)
			}
			if len(st.Args) != len(tt.args) || len(tt.args) > 0 && !reflect.DeepEqual(st.Args, tt.args) {
				t.Errorf("args %#v, want %#v", st.Args, tt.args)
			}
		})
	}
}

// TestRenderTypedRefusals checks values the column cannot take: they are
// refused before anything reaches the server.
func TestRenderTypedRefusals(t *testing.T) {
	info := typedTable()
	ins := func(col string, v any) *query.Plan {
		return &query.Plan{Action: query.Insert, Table: "t", Columns: []string{col}, Rows: [][]any{{v}}}
	}
	filter := func(col string, v any) *query.Plan {
		return &query.Plan{Action: query.Read, Table: "t", Columns: []string{"id"}, Where: cond(col, query.Eq, v)}
	}
	tests := []struct {
		name string
		plan *query.Plan
	}{
		{"null in a non-nullable column", ins("s", nil)},
		{"null in an array", ins("arr", nil)},
		{"null update", &query.Plan{Action: query.Update, Table: "t", All: true, Set: []query.Assign{{Column: "m", Value: nil}}}},
		{"Int8 overflow", ins("i8", int64(128))},
		{"UInt32 negative", ins("u32", int64(-1))},
		{"UInt64 negative", filter("u64", "-1")},
		{"UInt64 overflow", ins("u64", "18446744073709551616")},
		{"not an integer", ins("id", "1.5")},
		{"not a decimal", ins("dec", "1e5x")},
		{"decimal infinity", filter("dec", "Infinity")},
		{"not a float", ins("f", "x")},
		{"not a date", filter("d", "2024-13-01")},
		{"date out of range", ins("d", "1969-12-31")},
		{"not a timestamp", filter("dt", "yesterday")},
		{"DateTime out of range", ins("dt", "2200-01-01T00:00:00Z")},
		{"FixedString too long", ins("fs", "abcd")},
		{"not a boolean", ins("b", "maybe")},
		{"not an array", ins("arr", "[1]")},
		{"bad array element", ins("arr", []any{"x"})},
		{"like pattern with NUL", &query.Plan{Action: query.Read, Table: "t", Columns: []string{"id"}, Where: cond("s", query.ILike, "a\x00%")}},
		{"like pattern not text", filter("s", "x")},
	}
	tests[len(tests)-1].plan.Where = cond("s", query.Like, int64(1))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := render(tt.plan, info)
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("got %q, %v; want an Invalid fault", st.SQL, err)
			}
		})
	}
}

// TestRenderValuesOnlyBound checks that request values reach only the
// argument list, typed or not.
func TestRenderValuesOnlyBound(t *testing.T) {
	evil := `x'); DROP TABLE t; --`
	plans := []*query.Plan{
		{Action: query.Read, Table: "t", Columns: []string{"s"}, Where: query.Or{cond("s", query.Eq, evil), cond("s", query.ILike, evil)}},
		{Action: query.Insert, Table: "t", Columns: []string{"s"}, Rows: [][]any{{evil}, {evil}}},
		{Action: query.Update, Table: "t", Where: cond("s", query.In, evil), Set: []query.Assign{{Column: "s", Value: evil}}},
	}
	for _, info := range []*tableInfo{nil, typedTable()} {
		for _, p := range plans {
			st, err := render(p, info)
			if err != nil {
				t.Fatal(err)
			}
			for _, sub := range []string{"DROP", "x'"} {
				if strings.Contains(st.SQL, sub) {
					t.Errorf("%q found in SQL %s", sub, st.SQL)
				}
			}
			found := false
			for _, a := range st.Args {
				if a == evil {
					found = true
				}
			}
			if !found {
				t.Errorf("value not in args %v", st.Args)
			}
		}
	}
}
