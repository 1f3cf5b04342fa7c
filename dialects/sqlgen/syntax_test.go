package sqlgen_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The dialects' output is covered by the golden files in package dialects;
// these tests pin what each Syntax field changes, on a toy syntax.

func toy(edit func(s *sqlgen.Syntax)) *sqlgen.Syntax {
	s := &sqlgen.Syntax{
		Placeholder: "?",
		QuoteOpen:   '<',
		QuoteClose:  '>',
		QuoteEscape: '>',
		True:        "T",
		False:       "F",
		LikeTail:    " ESC",
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

func read(where query.Expr, limit, offset int64, order ...query.Order) *query.Plan {
	return &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: where, Limit: limit, Offset: offset, Order: order}
}

func TestSyntax(t *testing.T) {
	one := [][]any{{1}}
	tests := []struct {
		name   string
		syntax *sqlgen.Syntax
		plan   *query.Plan
		sql    string
		args   []any
	}{
		{"standard read", toy(nil),
			read(query.Or{cond("a>b", query.Eq, 1), query.Not{X: query.And{}}}, 5, 0, query.Order{Column: "a", Desc: true}),
			"SELECT <a> FROM <t> WHERE <a>>b> = ? OR NOT (T) ORDER BY <a> DESC LIMIT ?", []any{1, int64(5)}},
		{"numbered placeholders", toy(func(s *sqlgen.Syntax) { s.Placeholder, s.Numbered = "$", true }),
			read(cond("a", query.In, 1, 2), 0, 0), "SELECT <a> FROM <t> WHERE <a> IN ($1, $2)", []any{1, 2}},
		{"empty in", toy(nil), read(query.And{cond("a", query.In), cond("a", query.NotIn)}, 0, 0),
			"SELECT <a> FROM <t> WHERE F AND T", nil},
		{"offset alone", toy(nil), read(nil, 0, 3), "SELECT <a> FROM <t> OFFSET ?", []any{int64(3)}},
		{"no limit in SQL", toy(func(s *sqlgen.Syntax) { s.NoLimit = "ALL" }), read(nil, 0, 3),
			"SELECT <a> FROM <t> LIMIT ALL OFFSET ?", []any{int64(3)}},
		{"no limit bound", toy(func(s *sqlgen.Syntax) { s.NoLimitArg = int64(99) }), read(nil, 0, 3),
			"SELECT <a> FROM <t> LIMIT ? OFFSET ?", []any{int64(99), int64(3)}},
		{"offset fetch", toy(func(s *sqlgen.Syntax) { s.OffsetFetch = true }), read(nil, 2, 0),
			"SELECT <a> FROM <t> ORDER BY (SELECT NULL) OFFSET ? ROWS FETCH NEXT ? ROWS ONLY", []any{int64(0), int64(2)}},
		{"nulls largest", toy(func(s *sqlgen.Syntax) { s.NullsLargest = true }), read(nil, 0, 0, query.Order{Column: "a"}),
			"SELECT <a> FROM <t> ORDER BY <a> ASC NULLS LAST", nil},
		{"bit booleans", toy(func(s *sqlgen.Syntax) { s.BitBooleans = true }), read(cond("a", query.IsFalse), 0, 0),
			"SELECT <a> FROM <t> WHERE (<a> = 0 AND <a> IS NOT NULL)", nil},
		{"ilike operator", toy(func(s *sqlgen.Syntax) { s.ILike = " ILIKE " }), read(cond("a", query.ILike, "x%"), 0, 0),
			"SELECT <a> FROM <t> WHERE <a> ILIKE ? ESC", []any{"x%"}},
		{"ilike lowered, pattern adapted", toy(func(s *sqlgen.Syntax) { s.LikeArg = func(v any) any { return "<" + v.(string) + ">" } }),
			read(cond("a", query.ILike, "x%"), 0, 0), "SELECT <a> FROM <t> WHERE LOWER(<a>) LIKE LOWER(?) ESC", []any{"<x%>"}},
		{"insert returning", toy(func(s *sqlgen.Syntax) { s.Returning = " RETURNING *" }),
			&query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b"}, Rows: [][]any{{1, query.Default{}}, {nil, 2}}},
			"INSERT INTO <t> (<a>, <b>) VALUES (?, DEFAULT), (?, ?) RETURNING *", []any{1, nil, 2}},
		{"insert empty lists", toy(nil), &query.Plan{Action: query.Insert, Table: "t", Rows: [][]any{{}, {}}},
			"INSERT INTO <t> () VALUES (), ()", nil},
		{"insert default values", toy(func(s *sqlgen.Syntax) { s.DefaultValues, s.Output = true, " OUT" }),
			&query.Plan{Action: query.Insert, Table: "t", Rows: [][]any{{}}}, "INSERT INTO <t> OUT DEFAULT VALUES", nil},
		{"insert omits default columns", toy(func(s *sqlgen.Syntax) { s.OmitDefaultColumns, s.NullKeyword = true, true }),
			&query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b"}, Rows: [][]any{{query.Default{}, nil}}},
			"INSERT INTO <t> (<b>) VALUES (NULL)", nil},
		{"update", toy(nil), &query.Plan{Action: query.Update, Table: "t", Set: []query.Assign{{Column: "a", Value: 1}}, Where: cond("b", query.IsNull)},
			"UPDATE <t> SET <a> = ? WHERE <b> IS NULL", []any{1}},
		{"mutation", toy(func(s *sqlgen.Syntax) { s.Mutations = true }), &query.Plan{Action: query.Delete, Table: "t", All: true},
			"ALTER TABLE <t> DELETE WHERE 1", nil},
		{"mutation filter", toy(func(s *sqlgen.Syntax) { s.Mutations = true }),
			&query.Plan{Action: query.Update, Schema: "s", Table: "t", Set: []query.Assign{{Column: "a", Value: 1}}, Where: cond("b", query.Between, 1, 2)},
			"ALTER TABLE <s>.<t> UPDATE <a> = ? WHERE ifNull(<b> BETWEEN ? AND ?, 0)", []any{1, 1, 2}},
		{"rows at the limit", toy(func(s *sqlgen.Syntax) { s.MaxRows = sqlgen.Limit{Max: 1, Msg: "%d > %d"} }),
			&query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a"}, Rows: one}, "INSERT INTO <t> (<a>) VALUES (?)", []any{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.syntax.Render(tt.plan)
			if err != nil || st.SQL != tt.sql || !reflect.DeepEqual(st.Args, tt.args) {
				t.Errorf("got  %s %#v (%v)\nwant %s %#v", st.SQL, st.Args, err, tt.sql, tt.args)
			}
		})
	}
}

func TestSyntaxRefusals(t *testing.T) {
	tooLong := func(name string) error {
		if len(name) > 3 {
			return fault.New(fault.Invalid, "too long")
		}
		return sqlgen.CheckIdent(name)
	}
	verify := func(st dialects.Stmt) error {
		if strings.Contains(st.SQL, "bad") {
			return fault.New(fault.Unsupported, "bad")
		}
		return nil
	}
	tests := []struct {
		name   string
		syntax *sqlgen.Syntax
		plan   *query.Plan
		kind   fault.Kind
	}{
		{"nil plan", toy(nil), nil, fault.Invalid},
		{"unknown action", toy(nil), &query.Plan{Action: 9, Table: "t"}, fault.Unsupported},
		{"NUL in identifier", toy(nil), read(nil, 0, 0, query.Order{Column: "a\x00"}), fault.Invalid},
		{"own identifier check", toy(func(s *sqlgen.Syntax) { s.CheckIdent = tooLong }), read(cond("abcd", query.IsNull), 0, 0), fault.Invalid},
		{"too many values", toy(func(s *sqlgen.Syntax) { s.MaxArgs = sqlgen.Limit{Max: 1, Msg: "%d > %d"} }),
			read(cond("a", query.In, 1, 2), 0, 0), fault.TooLarge},
		{"too many rows", toy(func(s *sqlgen.Syntax) { s.MaxRows = sqlgen.Limit{Max: 1, Msg: "%d > %d"} }),
			&query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a"}, Rows: [][]any{{1}, {2}}}, fault.TooLarge},
		{"several default rows", toy(func(s *sqlgen.Syntax) { s.DefaultValues = true }),
			&query.Plan{Action: query.Insert, Table: "t", Rows: [][]any{{}, {}}}, fault.Unsupported},
		{"verify", toy(func(s *sqlgen.Syntax) { s.Verify = verify }), read(nil, 0, 0, query.Order{Column: "bad"}), fault.Unsupported},
		{"pushed-down NOT without a Cond hook", toy(func(s *sqlgen.Syntax) { s.PushNot = true }),
			read(query.Not{X: cond("a", query.IsNull)}, 0, 0), fault.Internal},
		{"nil pointer", toy(nil), read((*query.Or)(nil), 0, 0), fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tt.syntax.Render(tt.plan)
			if got := fault.KindOf(err); got != tt.kind {
				t.Fatalf("Render = %q, %v; want a %s fault", st.SQL, err, tt.kind)
			}
		})
	}
}

// custom takes every part over that a dialect can: negations and column
// names only, the second insert column, v for every new value.
type custom struct{ sqlgen.Builder }

func (b *custom) WriteCond(c *query.Cond, neg, top bool) {
	if neg {
		b.Str("not ")
	}
	b.Ident(c.Column)
}

func (b *custom) WriteInsert(p *query.Plan) {
	b.Str("INSERT ")
	b.Columns(p.Columns, []int{1})
}

func (b *custom) WriteSetValue(query.Assign) { b.Str("v") }

// TestWriters checks that a dialect's writers replace the standard parts,
// and that the CondWriter receives the negation with PushNot.
func TestWriters(t *testing.T) {
	s := toy(func(s *sqlgen.Syntax) { s.PushNot = true })
	for _, tt := range []struct {
		plan *query.Plan
		want string
	}{
		{read(query.Not{X: query.And{cond("a", query.Eq, 1), cond("b", query.Eq, 1)}}, 0, 0), "SELECT <a> FROM <t> WHERE not <a> OR not <b>"},
		{&query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a", "b"}}, "INSERT <b>"},
		{&query.Plan{Action: query.Update, Table: "t", All: true, Set: []query.Assign{{Column: "a", Value: 1}}}, "UPDATE <t> SET <a> = v"},
	} {
		b := &custom{}
		b.Init(s, b)
		if st, err := b.Render(tt.plan); err != nil || st.SQL != tt.want {
			t.Errorf("got %q, %v; want %q", st.SQL, err, tt.want)
		}
	}
}

var (
	_ sqlgen.CondWriter     = (*custom)(nil)
	_ sqlgen.InsertWriter   = (*custom)(nil)
	_ sqlgen.SetValueWriter = (*custom)(nil)
)
