package dialecttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// colSpec is one column of a fixture as the package documentation
// specifies it.
type colSpec struct {
	name     string
	kinds    []dialects.Kind // the kinds it may introspect as
	nullable bool
	pk       bool
	filled   bool // HasDefault must be true
	unfilled bool // HasDefault must be false
	dflt     string
}

func (s *suite) testIntrospection(t *testing.T) {
	ctx, cancel := ctxT()
	defer cancel()
	tables, err := s.src.Tables(ctx)
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	s.tables = map[string]*dialects.Table{}
	var got []string
	for i := range tables {
		tb := &tables[i]
		if tb.Schema != s.h.Config.Schema {
			t.Errorf("table %s: Schema %q, want %q", tb.Name, tb.Schema, s.h.Config.Schema)
		}
		if _, dup := s.tables[tb.Name]; dup {
			t.Errorf("table %s listed twice", tb.Name)
		}
		s.tables[tb.Name] = tb
		got = append(got, tb.Name)
	}
	want := []string{TableItems, TableTypes, TableWrites}
	if s.h.Lacks.Timeout == "" {
		want = append(want, TableSlow)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Tables lists %v, want exactly %v (the fixtures of a fresh schema; conf_slow is there unless Lacks.Timeout)", got, want)
	}

	l := &s.h.Lacks
	s.numKind = dialects.KindInt
	numKinds := []dialects.Kind{dialects.KindInt}
	if l.Integers != "" {
		s.numKind = dialects.KindFloat
		numKinds = []dialects.Kind{dialects.KindFloat}
	}
	id := colSpec{name: "id", kinds: []dialects.Kind{dialects.KindInt, dialects.KindUUID, dialects.KindString},
		pk: true, filled: l.GeneratedKeys == ""}
	name := colSpec{name: "name", kinds: []dialects.Kind{dialects.KindString}, unfilled: true}

	items := []colSpec{id, name,
		{name: "qty", kinds: numKinds, nullable: true},
		{name: "ratio", kinds: []dialects.Kind{dialects.KindFloat}, nullable: true},
	}
	itemsAbsent := map[string]string{}
	if l.Bool == "" {
		items = append(items, colSpec{name: "active", kinds: []dialects.Kind{dialects.KindBool}, nullable: true})
	} else {
		itemsAbsent["active"] = "Lacks.Bool"
	}
	items = append(items, colSpec{name: "note", kinds: []dialects.Kind{dialects.KindString}, nullable: true})
	s.checkColumns(t, TableItems, items, itemsAbsent)

	writes := []colSpec{id, name, {name: "qty", kinds: numKinds, nullable: true}}
	writesAbsent := map[string]string{}
	if l.Defaults == "" {
		writes = append(writes, colSpec{name: "n", kinds: numKinds, nullable: true, filled: true, dflt: "7"})
	} else {
		writesAbsent["n"] = "Lacks.Defaults"
	}
	s.checkColumns(t, TableWrites, writes, writesAbsent)

	types := []colSpec{name}
	absent := map[string]string{}
	for _, c := range typeCols {
		if c.lack(l) != "" {
			absent[c.name] = "Lacks." + c.what
			continue
		}
		types = append(types, colSpec{name: c.name, kinds: []dialects.Kind{c.kind}, nullable: true})
	}
	s.checkColumns(t, TableTypes, types, absent)

	idCol, _ := s.tables[TableItems].Column("id")
	s.idKind = idCol.Kind
	if wid, ok := s.tables[TableWrites].Column("id"); ok && wid.Kind != s.idKind {
		t.Errorf("conf_writes.id is %s but conf_items.id is %s: both ids must have one kind", wid.Kind, s.idKind)
	}
	if l.Timeout == "" && len(s.tables[TableSlow].Columns) == 0 {
		t.Errorf("conf_slow has no columns")
	}
}

// checkColumns compares a fixture table with its specification: every
// specified column with its kind, nullability, key and default, in the
// specified relative order; the columns a lack removes must be absent;
// columns the suite does not know must be fillable by the database.
func (s *suite) checkColumns(t *testing.T, table string, spec []colSpec, absent map[string]string) {
	t.Helper()
	tb := s.tables[table]
	pos := -1
	for _, c := range spec {
		i := slices.IndexFunc(tb.Columns, func(col dialects.Column) bool { return col.Name == c.name })
		if i < 0 {
			t.Errorf("%s.%s is missing: create it, or declare the Lacks entry that removes it", table, c.name)
			continue
		}
		col := tb.Columns[i]
		where := fmt.Sprintf("%s.%s (%s)", table, c.name, col.DBType)
		if i < pos {
			t.Errorf("%s comes before a column the specification lists earlier", where)
		}
		pos = i
		if col.DBType == "" {
			t.Errorf("%s.%s: DBType is empty", table, c.name)
		}
		if !slices.Contains(c.kinds, col.Kind) {
			t.Errorf("%s introspects as %s, want %s", where, col.Kind, kindList(c.kinds))
		}
		if col.Nullable != c.nullable {
			t.Errorf("%s: Nullable %v, want %v", where, col.Nullable, c.nullable)
		}
		if col.PrimaryKey != c.pk {
			t.Errorf("%s: PrimaryKey %v, want %v", where, col.PrimaryKey, c.pk)
		}
		if c.filled && !col.HasDefault {
			t.Errorf("%s: HasDefault false, but the database fills it", where)
		}
		if c.unfilled && col.HasDefault {
			t.Errorf("%s: HasDefault true, but it has no default (an engine's implicit zero value is not one: a NULL must fail, not become it)", where)
		}
		if c.dflt != "" && !strings.Contains(col.Default, c.dflt) {
			t.Errorf("%s: Default %q, want the expression %s", where, col.Default, c.dflt)
		}
	}
	for _, col := range tb.Columns {
		if lack, ok := absent[col.Name]; ok {
			t.Errorf("%s.%s is present although %s is declared: drop the column or the lack", table, col.Name, lack)
			continue
		}
		known := slices.ContainsFunc(spec, func(c colSpec) bool { return c.name == col.Name })
		if !known && !col.Nullable && !col.HasDefault {
			t.Errorf("%s.%s is not in the specification and can be neither NULL nor filled by the database", table, col.Name)
		}
	}
}

func kindList(ks []dialects.Kind) string {
	var out []string
	for _, k := range ks {
		out = append(out, k.String())
	}
	return strings.Join(out, " or ")
}

// item is one row of conf_items as the suite inserts it. A nil field is
// NULL; default marks a cell left to the database (Default{}).
type item struct {
	name   string
	qty    any // float64 or nil, bound per the column's kind
	ratio  any
	active any
	note   any
}

var defaultCell = query.Default{}

// items is the content of conf_items. Names differ in case only ("Ann",
// "ann") to prove that eq and like are case-sensitive and ilike is not;
// "Cy_1" and "Dee 100%" hold LIKE's wildcards literally.
var items = []item{
	{"Ann", 30.0, 9.5, true, "x@example.com"},
	{"bob", 25.0, 7.0, false, defaultCell},
	{"Cy_1", 40.0, 8.25, nil, "cy@EXAMPLE.com"},
	{"Dee 100%", nil, nil, true, `o'hara "q" \ ✓`},
	{"eve", 25.0, 6.5, false, "eve@example.org"},
	{"ann", 10.0, -1.5, true, "ANN@Example.COM"},
}

func (s *suite) hasBool() bool { return s.h.Lacks.Bool == "" }

func (s *suite) itemColumns() []string {
	cols := []string{"name", "qty", "ratio"}
	if s.hasBool() {
		cols = append(cols, "active")
	}
	return append(cols, "note")
}

func (s *suite) bindNum(v any) any {
	if f, ok := v.(float64); ok {
		return num(s.numKind, f)
	}
	return v
}

// testSeed fills conf_items with one multi-row insert holding NULLs and a
// DEFAULT cell on a column without a default (which is NULL).
func (s *suite) testSeed(t *testing.T) {
	if n := s.count(t, TableItems, nil); n != 0 {
		t.Fatalf("conf_items has %d rows before the suite starts; the harness must give fresh, empty fixtures", n)
	}
	p := s.writePlan(query.Insert, TableItems)
	p.Columns = s.itemColumns()
	if s.h.Lacks.GeneratedKeys != "" {
		p.Columns = append([]string{"id"}, p.Columns...)
	}
	for _, it := range items {
		row := []any{it.name, s.bindNum(it.qty), it.ratio}
		if s.hasBool() {
			row = append(row, it.active)
		}
		row = append(row, it.note)
		if s.h.Lacks.GeneratedKeys != "" {
			row = append([]any{s.newID()}, row...)
		}
		p.Rows = append(p.Rows, row)
	}
	res := s.write(t, p)
	if res.RowsAffected != int64(len(items)) {
		t.Errorf("RowsAffected %d, want %d", res.RowsAffected, len(items))
	}
}

// testReadValues reads conf_items back whole and checks every cell's Go
// type and value, and that Rows.Columns describes the result like Tables.
func (s *suite) testReadValues(t *testing.T) {
	cols := append([]string{"id"}, s.itemColumns()...)
	rcols, rows := readAll(t, s.src, s.readPlan(TableItems, nil, cols...))
	s.checkResultColumns(t, TableItems, rcols, cols)
	if len(rows) != len(items) {
		t.Fatalf("%d rows, want %d", len(rows), len(items))
	}
	byName := map[string][]any{}
	for _, r := range rows {
		n, _ := r[1].(string)
		byName[n] = r
	}
	tb := s.tables[TableItems]
	ids := map[any]bool{}
	for _, it := range items {
		r, ok := byName[it.name]
		if !ok {
			t.Errorf("row %q not read back", it.name)
			continue
		}
		want := []any{it.name, it.qty, it.ratio}
		if s.hasBool() {
			want = append(want, it.active)
		}
		want = append(want, it.note)
		for i, w := range want {
			if w == defaultCell {
				w = nil // DEFAULT of a column without a default
			}
			c, _ := tb.Column(cols[i+1])
			if why := sameCell(c.Kind, r[i+1], w); why != "" {
				t.Errorf("%s.%s: %s", it.name, cols[i+1], why)
			}
		}
		s.checkID(t, r[0])
		if ids[r[0]] {
			t.Errorf("%s: id %v is not unique", it.name, r[0])
		}
		ids[r[0]] = true
	}
}

// checkID checks a generated key's Go type against the id column's kind.
func (s *suite) checkID(t *testing.T, id any) {
	t.Helper()
	switch s.idKind {
	case dialects.KindInt:
		if _, ok := id.(int64); !ok {
			t.Errorf("id %#v (%T), want int64", id, id)
		}
	default:
		if v, ok := id.(string); !ok || v == "" {
			t.Errorf("id %#v (%T), want a non-empty string", id, id)
		}
	}
}

// checkResultColumns checks that Rows.Columns names the projection in its
// order with the kinds Tables gave those columns.
func (s *suite) checkResultColumns(t *testing.T, table string, got []dialects.Column, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Rows.Columns has %d columns, want %d (%v)", len(got), len(want), want)
	}
	tb := s.tables[table]
	for i, name := range want {
		if got[i].Name != name {
			t.Errorf("Rows.Columns[%d] is %q, want %q", i, got[i].Name, name)
			continue
		}
		if c, _ := tb.Column(name); got[i].Kind != c.Kind {
			t.Errorf("Rows.Columns[%d] %s is %s, but Tables says %s", i, name, got[i].Kind, c.Kind)
		}
	}
}

// testOperators runs every operator and AND/OR/NOT on conf_items and
// compares the names found (sorted in Go).
func (s *suite) testOperators(t *testing.T) {
	n := func(v float64) any { return num(s.numKind, v) }
	all := []string{"Ann", "Cy_1", "Dee 100%", "ann", "bob", "eve"}
	tests := []struct {
		name    string
		where   query.Expr
		want    []string
		needsTF bool // uses conf_items.active
	}{
		{"eq string is case-sensitive", cond("name", query.Eq, "Ann"), []string{"Ann"}, false},
		{"eq number", cond("qty", query.Eq, n(25)), []string{"bob", "eve"}, false},
		{"eq quotes and unicode", cond("note", query.Eq, `o'hara "q" \ ✓`), []string{"Dee 100%"}, false},
		{"eq injection stays a value", cond("name", query.Eq, "x' OR '1'='1"), []string{}, false},
		{"ne", cond("name", query.Ne, "bob"), []string{"Ann", "Cy_1", "Dee 100%", "ann", "eve"}, false},
		{"ne skips NULL", cond("qty", query.Ne, n(25)), []string{"Ann", "Cy_1", "ann"}, false},
		{"gt", cond("qty", query.Gt, n(25)), []string{"Ann", "Cy_1"}, false},
		{"ge", cond("qty", query.Ge, n(30)), []string{"Ann", "Cy_1"}, false},
		{"lt float", cond("ratio", query.Lt, 7.0), []string{"ann", "eve"}, false},
		{"le float", cond("ratio", query.Le, 7.0), []string{"ann", "bob", "eve"}, false},
		{"ge float", cond("ratio", query.Ge, 8.25), []string{"Ann", "Cy_1"}, false},
		{"like prefix is case-sensitive", cond("name", query.Like, "A%"), []string{"Ann"}, false},
		{"like exact", cond("name", query.Like, "ann"), []string{"ann"}, false},
		{"like one character", cond("name", query.Like, "_ob"), []string{"bob"}, false},
		{"like escaped percent", cond("name", query.Like, `%\%`), []string{"Dee 100%"}, false},
		{"like escaped underscore", cond("name", query.Like, `%\_%`), []string{"Cy_1"}, false},
		{"like suffix is case-sensitive", cond("note", query.Like, "%@example.com"), []string{"Ann"}, false},
		{"ilike", cond("note", query.ILike, "%@example.com"), []string{"Ann", "Cy_1", "ann"}, false},
		{"ilike exact", cond("name", query.ILike, "ANN"), []string{"Ann", "ann"}, false},
		{"ilike with a quote", cond("note", query.ILike, "O'HARA%"), []string{"Dee 100%"}, false},
		{"in strings", cond("name", query.In, "Ann", "eve", "zzz"), []string{"Ann", "eve"}, false},
		{"in numbers", cond("qty", query.In, n(10), n(40), n(99)), []string{"Cy_1", "ann"}, false},
		{"in empty", cond("name", query.In), []string{}, false},
		{"nin", cond("name", query.NotIn, "bob", "eve"), []string{"Ann", "Cy_1", "Dee 100%", "ann"}, false},
		{"nin skips NULL", cond("qty", query.NotIn, n(25)), []string{"Ann", "Cy_1", "ann"}, false},
		{"nin empty", cond("name", query.NotIn), all, false},
		{"bw inclusive", cond("qty", query.Between, n(25), n(30)), []string{"Ann", "bob", "eve"}, false},
		{"bw float", cond("ratio", query.Between, 6.5, 8.25), []string{"Cy_1", "bob", "eve"}, false},
		{"isnull number", cond("qty", query.IsNull), []string{"Dee 100%"}, false},
		{"isnull from DEFAULT", cond("note", query.IsNull), []string{"bob"}, false},
		{"notnull", cond("ratio", query.IsNotNull), []string{"Ann", "Cy_1", "ann", "bob", "eve"}, false},
		{"istrue", cond("active", query.IsTrue), []string{"Ann", "Dee 100%", "ann"}, true},
		{"isfalse", cond("active", query.IsFalse), []string{"bob", "eve"}, true},
		{"notnull bool", cond("active", query.IsNotNull), []string{"Ann", "Dee 100%", "ann", "bob", "eve"}, true},
		{"and", query.And{cond("qty", query.Ge, n(25)), cond("ratio", query.Lt, 9.0)}, []string{"Cy_1", "bob", "eve"}, false},
		{"or of and", query.Or{cond("name", query.Eq, "Ann"),
			query.And{cond("qty", query.Ge, n(40)), cond("note", query.IsNotNull)}}, []string{"Ann", "Cy_1"}, false},
		{"and of or", query.And{query.Or{cond("qty", query.Eq, n(25)), cond("qty", query.IsNull)},
			cond("note", query.IsNotNull)}, []string{"Dee 100%", "eve"}, false},
		{"not", query.Not{X: query.Or{cond("name", query.Eq, "Ann"), cond("name", query.Eq, "bob")}},
			[]string{"Cy_1", "Dee 100%", "ann", "eve"}, false},
		{"not of comparison skips NULL", query.Not{X: cond("qty", query.Eq, n(25))}, []string{"Ann", "Cy_1", "ann"}, false},
		{"not istrue keeps NULL", query.Not{X: cond("active", query.IsTrue)}, []string{"Cy_1", "bob", "eve"}, true},
		{"not not", query.Not{X: query.Not{X: cond("active", query.IsFalse)}}, []string{"bob", "eve"}, true},
		{"not isnull", query.Not{X: cond("qty", query.IsNull)}, []string{"Ann", "Cy_1", "ann", "bob", "eve"}, false},
		{"empty and is true", query.And{}, all, false},
		{"empty or is false", query.Or{}, []string{}, false},
		{"or with empty and", query.Or{query.And{}, cond("name", query.Eq, "none")}, all, false},
		{"and with empty or", query.And{query.Or{}, cond("name", query.Eq, "Ann")}, []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsTF && !s.hasBool() {
				s.notTested(t, "boolean tests", "Bool", s.h.Lacks.Bool)
				return
			}
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if got := s.names(t, TableItems, tt.where); !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// testOrder checks ordering on several columns in mixed directions, and
// where NULL goes as Harness.NullOrder declares.
func (s *suite) testOrder(t *testing.T) {
	asc := func(c string) query.Order { return query.Order{Column: c} }
	desc := func(c string) query.Order { return query.Order{Column: c, Desc: true} }
	nullAsc, nullDesc := "first", "last"
	switch s.h.NullOrder {
	case NullsLargest:
		nullAsc, nullDesc = "last", "first"
	case NullsLast:
		nullAsc, nullDesc = "last", "last"
	}
	place := func(at string, rest ...string) []string {
		if at == "first" {
			return append([]string{"Dee 100%"}, rest...)
		}
		return append(rest, "Dee 100%")
	}
	tests := []struct {
		name  string
		where query.Expr
		order []query.Order
		want  []string
	}{
		{"two keys, mixed", cond("qty", query.IsNotNull), []query.Order{desc("qty"), asc("ratio")},
			[]string{"Cy_1", "Ann", "eve", "bob", "ann"}},
		{"two keys, descending", cond("qty", query.IsNotNull), []query.Order{desc("qty"), desc("ratio")},
			[]string{"Cy_1", "Ann", "bob", "eve", "ann"}},
		{"NULL ascending (" + nullAsc + ")", nil, []query.Order{asc("qty"), asc("ratio")},
			place(nullAsc, "ann", "eve", "bob", "Ann", "Cy_1")},
		{"NULL descending (" + nullDesc + ")", nil, []query.Order{desc("qty"), desc("ratio")},
			place(nullDesc, "Cy_1", "Ann", "bob", "eve", "ann")},
	}
	if s.hasBool() {
		tests = append(tests, struct {
			name  string
			where query.Expr
			order []query.Order
			want  []string
		}{"three keys", query.And{cond("active", query.IsNotNull), cond("qty", query.IsNotNull)},
			[]query.Order{desc("active"), asc("qty"), desc("ratio")}, []string{"ann", "Ann", "bob", "eve"}})
	} else {
		s.notTested(t, "ordering on a boolean", "Bool", s.h.Lacks.Bool)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.names(t, TableItems, tt.where, tt.order...); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// testPaging pages through an ordered read, past the end included.
func (s *suite) testPaging(t *testing.T) {
	order := []query.Order{{Column: "qty", Desc: true}, {Column: "ratio"}}
	page := func(limit, offset int64) []string {
		p := s.readPlan(TableItems, cond("qty", query.IsNotNull), "name")
		p.Order, p.Limit, p.Offset = order, limit, offset
		_, rows := readAll(t, s.src, p)
		out := []string{}
		for _, r := range rows {
			out = append(out, nameOf(t, r[0]))
		}
		return out
	}
	for _, tt := range []struct {
		limit, offset int64
		want          []string
	}{
		{2, 0, []string{"Cy_1", "Ann"}},
		{2, 2, []string{"eve", "bob"}},
		{2, 4, []string{"ann"}},
		{2, 5, []string{}},
		{2, 6, []string{}},
		{10, 100, []string{}},
		{10, 0, []string{"Cy_1", "Ann", "eve", "bob", "ann"}},
		{1, 3, []string{"bob"}},
	} {
		if got := page(tt.limit, tt.offset); !slices.Equal(got, tt.want) {
			t.Errorf("limit %d offset %d: got %q, want %q", tt.limit, tt.offset, got, tt.want)
		}
	}
	// Without an order a page still has its size.
	p := s.readPlan(TableItems, nil, "name")
	p.Limit = 4
	if _, rows := readAll(t, s.src, p); len(rows) != 4 {
		t.Errorf("unordered limit 4: %d rows", len(rows))
	}
}

// testProjection reads chosen columns in a chosen order.
func (s *suite) testProjection(t *testing.T) {
	cols, rows := readAll(t, s.src, s.readPlan(TableItems, cond("name", query.Eq, "Ann"), "note", "name"))
	s.checkResultColumns(t, TableItems, cols, []string{"note", "name"})
	if len(rows) != 1 || rows[0][0] != "x@example.com" || rows[0][1] != "Ann" {
		t.Errorf("note, name of Ann: %v", rows)
	}
	cols, rows = readAll(t, s.src, s.readPlan(TableItems, nil, "qty"))
	s.checkResultColumns(t, TableItems, cols, []string{"qty"})
	if len(rows) != len(items) {
		t.Errorf("qty alone: %d rows, want %d", len(rows), len(items))
	}
	cols, rows = readAll(t, s.src, s.readPlan(TableItems, cond("name", query.Eq, "bob"), "ratio", "id", "qty", "name"))
	s.checkResultColumns(t, TableItems, cols, []string{"ratio", "id", "qty", "name"})
	if len(rows) != 1 || rows[0][3] != "bob" || sameCell(dialects.KindFloat, rows[0][0], 7.0) != "" {
		t.Errorf("ratio, id, qty, name of bob: %v", rows)
	}
}
