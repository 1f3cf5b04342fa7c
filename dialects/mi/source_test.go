package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

const itemsYAML = `table: items
title: Items
fields:
  - name: title
    type: string
    required: true
  - name: qty
    type: number
  - name: done
    type: boolean
  - name: tags
    type: array
  - name: meta
    type: object
`

var itemCols = []string{"title", "qty", "done", "tags", "meta"}

// openItems creates a scope directory with the items table and opens it
// with a fixed clock.
func openItems(t *testing.T) (*Source, string) {
	t.Helper()
	dir := t.TempDir()
	if err := CreateTable(dir, "items", []byte(itemsYAML)); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), dialects.Config{DSN: dir, Schema: "app"})
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	s.now = func() time.Time { return time.Unix(1_800_000_000, 0) }
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func write(t *testing.T, s *Source, p query.Plan) dialects.WriteResult {
	t.Helper()
	if p.Table == "" {
		p.Table = "items"
	}
	res, err := s.Write(context.Background(), &p)
	if err != nil {
		t.Fatalf("%v: %v", p.Action, err)
	}
	return res
}

func insertItems(t *testing.T, s *Source, rows ...[]any) dialects.WriteResult {
	t.Helper()
	return write(t, s, query.Plan{Action: query.Insert, Columns: itemCols, Rows: rows})
}

// readAll runs a read and copies every row out of the stream.
func readAll(t *testing.T, s *Source, p query.Plan) ([]dialects.Column, [][]any) {
	t.Helper()
	p.Action = query.Read
	if p.Table == "" {
		p.Table = "items"
	}
	rs, err := s.Read(context.Background(), &p)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	defer rs.Close()
	var out [][]any
	for rs.Next() {
		v, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(v))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return rs.Columns(), out
}

// titles reads the title of every row matching where, in order.
func titles(t *testing.T, s *Source, where query.Expr, order ...query.Order) []string {
	t.Helper()
	_, rows := readAll(t, s, query.Plan{Columns: []string{"title"}, Where: where, Order: order})
	out := []string{}
	for _, r := range rows {
		out = append(out, r[0].(string))
	}
	return out
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}

// seed inserts four rows that cover every kind of field, absent keys and
// explicit nulls.
func seed(t *testing.T, s *Source) map[string]string {
	t.Helper()
	res := insertItems(t, s,
		[]any{"Apple", json.Number("5"), true, []any{"red", "fruit"}, map[string]any{"k": 1}},
		[]any{"banana", 2.5, false, []any{"yellow", "fruit"}, query.Default{}},
		[]any{"Cherry_pie", int64(10), query.Default{}, []any{}, json.RawMessage(`{"k": 2}`)},
		[]any{"date%", nil, true, query.Default{}, nil},
	)
	ids := map[string]string{}
	for _, r := range res.Returned {
		ids[r[3].(string)] = r[0].(string)
	}
	return ids
}

func TestOperators(t *testing.T) {
	s, _ := openItems(t)
	ids := seed(t, s)
	all := []string{"Apple", "banana", "Cherry_pie", "date%"}
	tests := []struct {
		name  string
		where query.Expr
		want  []string
	}{
		{"string eq", cond("title", query.Eq, "Apple"), []string{"Apple"}},
		{"string ne", cond("title", query.Ne, "Apple"), []string{"banana", "Cherry_pie", "date%"}},
		{"string gt", cond("title", query.Gt, "a"), []string{"banana", "date%"}},
		{"string in", cond("title", query.In, "Apple", "date%", "nope"), []string{"Apple", "date%"}},
		{"string nin", cond("title", query.NotIn, "Apple", "date%"), []string{"banana", "Cherry_pie"}},
		{"like is case-sensitive", cond("title", query.Like, "apple"), []string{}},
		{"like wildcard", cond("title", query.Like, "%an%"), []string{"banana"}},
		{"like underscore wildcard", cond("title", query.Like, "Cherry_pi_"), []string{"Cherry_pie"}},
		{"like escaped underscore", cond("title", query.Like, `%\_%`), []string{"Cherry_pie"}},
		{"like escaped percent", cond("title", query.Like, `%\%`), []string{"date%"}},
		{"ilike", cond("title", query.ILike, "APPLE"), []string{"Apple"}},
		{"ilike wildcard", cond("title", query.ILike, "%A%"), []string{"Apple", "banana", "date%"}},
		{"ilike escaped percent", cond("title", query.ILike, `%\%`), []string{"date%"}},
		{"number eq integer", cond("qty", query.Eq, json.Number("5")), []string{"Apple"}},
		{"number eq float", cond("qty", query.Eq, 5.0), []string{"Apple"}},
		{"number ne", cond("qty", query.Ne, json.Number("5")), []string{"banana", "Cherry_pie"}},
		{"number gt", cond("qty", query.Gt, 2.5), []string{"Apple", "Cherry_pie"}},
		{"number ge", cond("qty", query.Ge, json.Number("2.5")), []string{"Apple", "banana", "Cherry_pie"}},
		{"number lt", cond("qty", query.Lt, int64(5)), []string{"banana"}},
		{"number le", cond("qty", query.Le, int64(5)), []string{"Apple", "banana"}},
		{"number bw", cond("qty", query.Between, json.Number("2"), json.Number("5")), []string{"Apple", "banana"}},
		{"number in", cond("qty", query.In, json.Number("5"), json.Number("10")), []string{"Apple", "Cherry_pie"}},
		{"number nin skips null", cond("qty", query.NotIn, json.Number("5")), []string{"banana", "Cherry_pie"}},
		{"number isnull (explicit null)", cond("qty", query.IsNull), []string{"date%"}},
		{"number notnull", cond("qty", query.IsNotNull), []string{"Apple", "banana", "Cherry_pie"}},
		{"bool istrue", cond("done", query.IsTrue), []string{"Apple", "date%"}},
		{"bool isfalse", cond("done", query.IsFalse), []string{"banana"}},
		{"bool eq true", cond("done", query.Eq, true), []string{"Apple", "date%"}},
		{"bool eq false", cond("done", query.Eq, false), []string{"banana"}},
		{"bool ne true", cond("done", query.Ne, true), []string{"banana"}},
		{"bool isnull (absent)", cond("done", query.IsNull), []string{"Cherry_pie"}},
		{"bool notnull", cond("done", query.IsNotNull), []string{"Apple", "banana", "date%"}},
		{"array eq", cond("tags", query.Eq, []any{"red", "fruit"}), []string{"Apple"}},
		{"array eq empty", cond("tags", query.Eq, []any{}), []string{"Cherry_pie"}},
		{"array ne", cond("tags", query.Ne, []any{"red", "fruit"}), []string{"banana", "Cherry_pie"}},
		{"array like (text contains)", cond("tags", query.Like, `%"fruit"%`), []string{"Apple", "banana"}},
		{"array in", cond("tags", query.In, []any{}, []any{"yellow", "fruit"}), []string{"banana", "Cherry_pie"}},
		{"array isnull (absent)", cond("tags", query.IsNull), []string{"date%"}},
		{"array notnull", cond("tags", query.IsNotNull), []string{"Apple", "banana", "Cherry_pie"}},
		{"object eq", cond("meta", query.Eq, map[string]any{"k": json.Number("1")}), []string{"Apple"}},
		{"object eq raw", cond("meta", query.Eq, json.RawMessage(`{ "k" : 2 }`)), []string{"Cherry_pie"}},
		{"object isnull (absent or null)", cond("meta", query.IsNull), []string{"banana", "date%"}},
		{"id eq", cond("id", query.Eq, ids["banana"]), []string{"banana"}},
		{"id like prefix", cond("id", query.Like, ids["Apple"][:8]+"%"), []string{"Apple"}},
		{"created_at", cond("created_at", query.Eq, int64(1_800_000_000)), all},
		{"updated_at", cond("updated_at", query.Lt, int64(1_800_000_000)), []string{}},
		{"or", query.Or{cond("title", query.Eq, "Apple"), cond("qty", query.Gt, int64(9))}, []string{"Apple", "Cherry_pie"}},
		{"and", query.And{cond("done", query.IsTrue), cond("qty", query.IsNotNull)}, []string{"Apple"}},
		{"not follows SQL nulls", query.Not{X: cond("done", query.Eq, true)}, []string{"banana"}},
		{"not isnull", query.Not{X: cond("done", query.IsNull)}, []string{"Apple", "banana", "date%"}},
		{"empty and", query.And{}, all},
		{"empty or", query.Or{}, []string{}},
		{"empty in", cond("title", query.In), []string{}},
		{"unknown field is null", cond("nope", query.IsNull), all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := titles(t, s, tt.where, query.Order{Column: "title"})
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestReadValuesAndProjection(t *testing.T) {
	s, _ := openItems(t)
	ids := seed(t, s)
	cols, rows := readAll(t, s, query.Plan{Order: []query.Order{{Column: "title"}}})
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	if want := []string{"id", "created_at", "updated_at", "title", "qty", "done", "tags", "meta"}; !slices.Equal(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	want := [][]any{
		{ids["Apple"], int64(1_800_000_000), int64(1_800_000_000), "Apple", json.Number("5"), true, []any{"red", "fruit"}, json.RawMessage(`{"k":1}`)},
		{ids["Cherry_pie"], int64(1_800_000_000), int64(1_800_000_000), "Cherry_pie", json.Number("10"), nil, []any{}, json.RawMessage(`{"k":2}`)},
		{ids["banana"], int64(1_800_000_000), int64(1_800_000_000), "banana", json.Number("2.5"), false, []any{"yellow", "fruit"}, nil},
		{ids["date%"], int64(1_800_000_000), int64(1_800_000_000), "date%", nil, true, nil, nil},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows\n got %#v\nwant %#v", rows, want)
	}

	cols, rows = readAll(t, s, query.Plan{Columns: []string{"qty", "id"}, Where: cond("title", query.Eq, "Apple")})
	if len(cols) != 2 || cols[0].Name != "qty" || cols[1].Name != "id" {
		t.Fatalf("projection columns %+v", cols)
	}
	if !reflect.DeepEqual(rows, [][]any{{json.Number("5"), ids["Apple"]}}) {
		t.Errorf("projected rows %#v", rows)
	}

	_, err := s.Read(context.Background(), &query.Plan{Action: query.Read, Table: "items", Columns: []string{"nope"}})
	if fault.KindOf(err) != fault.Invalid {
		t.Errorf("unknown column: %v", err)
	}
	_, err = s.Read(context.Background(), &query.Plan{Action: query.Read, Table: "missing"})
	if fault.KindOf(err) != fault.NotFound {
		t.Errorf("missing table: %v", err)
	}
	_, err = s.Read(context.Background(), &query.Plan{Action: query.Read, Table: "../items"})
	if fault.KindOf(err) != fault.NotFound {
		t.Errorf("escaping table name: %v", err)
	}
}

func TestOrderAndPaging(t *testing.T) {
	s, _ := openItems(t)
	seed(t, s)
	// done ASC puts the absent value first; ties broken by title DESC.
	got := titles(t, s, nil, query.Order{Column: "done"}, query.Order{Column: "title", Desc: true})
	if want := []string{"Cherry_pie", "banana", "date%", "Apple"}; !slices.Equal(got, want) {
		t.Errorf("order by done, title desc: %q, want %q", got, want)
	}
	got = titles(t, s, nil, query.Order{Column: "qty", Desc: true}, query.Order{Column: "created_at"})
	if want := []string{"Cherry_pie", "Apple", "banana", "date%"}; !slices.Equal(got, want) {
		t.Errorf("order by qty desc: %q, want %q", got, want)
	}

	page := func(limit, offset int64) []string {
		_, rows := readAll(t, s, query.Plan{Columns: []string{"title"}, Order: []query.Order{{Column: "title"}}, Limit: limit, Offset: offset})
		out := []string{}
		for _, r := range rows {
			out = append(out, r[0].(string))
		}
		return out
	}
	for _, tt := range []struct {
		limit, offset int64
		want          []string
	}{
		{2, 0, []string{"Apple", "Cherry_pie"}},
		{2, 2, []string{"banana", "date%"}},
		{2, 3, []string{"date%"}},
		{2, 4, []string{}},
		{2, 100, []string{}},
		{0, 3, []string{"date%"}},
	} {
		if got := page(tt.limit, tt.offset); !slices.Equal(got, tt.want) {
			t.Errorf("limit %d offset %d: %q, want %q", tt.limit, tt.offset, got, tt.want)
		}
	}
}

func TestInsertValidation(t *testing.T) {
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	seed(t, s)
	tests := []struct {
		name string
		cols []string
		rows [][]any
		msg  string
	}{
		{"required missing", []string{"qty"}, [][]any{{json.Number("1")}}, `field "title": required field missing`},
		{"required null", []string{"title"}, [][]any{{nil}}, `field "title": required field missing`},
		{"required default", []string{"title"}, [][]any{{query.Default{}}}, `field "title": required field missing`},
		{"string type", []string{"title"}, [][]any{{json.Number("5")}}, `field "title": expected type 'string', got 'number'`},
		{"number type", []string{"title", "qty"}, [][]any{{"x", "5"}}, `field "qty": expected type 'number', got 'string'`},
		{"boolean type", []string{"title", "done"}, [][]any{{"x", int64(1)}}, `field "done": expected type 'boolean', got 'number'`},
		{"array type", []string{"title", "tags"}, [][]any{{"x", map[string]any{}}}, `field "tags": expected type 'array', got 'object'`},
		{"object type", []string{"title", "meta"}, [][]any{{"x", []any{}}}, `field "meta": expected type 'object', got 'array'`},
		{"id given", []string{"id", "title"}, [][]any{{"0000", "x"}}, `column "id" is filled by the database`},
		{"updated_at given", []string{"title", "updated_at"}, [][]any{{"x", int64(5)}}, `column "updated_at" is filled by the database`},
		{
			"failing row in the middle",
			[]string{"title", "qty"},
			[][]any{{"ok1", json.Number("1")}, {"bad", true}, {"ok2", json.Number("2")}},
			`rows[1]: field "qty": expected type 'number', got 'boolean'`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(t, db, "SELECT COUNT(*) FROM rows")
			hist := count(t, db, "SELECT COUNT(*) FROM _row_history")
			_, err := s.Write(context.Background(), &query.Plan{Action: query.Insert, Table: "items", Columns: tt.cols, Rows: tt.rows})
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("kind %v (%v), want Invalid", fault.KindOf(err), err)
			}
			if got := shown(err); got != tt.msg {
				t.Errorf("message %q, want %q", got, tt.msg)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM rows"); n != before {
				t.Errorf("rows %d → %d", before, n)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM _row_history"); n != hist {
				t.Errorf("history %d → %d", hist, n)
			}
		})
	}
}

// A failure inside the transaction (here a trigger on the third row) takes
// the rows and history already written by the same call with it.
func TestInsertRollsBackInTransaction(t *testing.T) {
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	if _, err := db.Exec(`CREATE TRIGGER boom BEFORE INSERT ON rows WHEN json_extract(NEW.data, '$.title') = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Write(context.Background(), &query.Plan{Action: query.Insert, Table: "items", Columns: []string{"title"}, Rows: [][]any{{"a"}, {"b"}, {"boom"}}})
	if err == nil {
		t.Fatal("insert succeeded")
	}
	if n := count(t, db, "SELECT COUNT(*) FROM rows"); n != 0 {
		t.Errorf("%d rows left", n)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM _row_history"); n != 0 {
		t.Errorf("%d history entries left", n)
	}
}

func TestInsertReturnsRowsAndKeepsNumbers(t *testing.T) {
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	res := write(t, s, query.Plan{
		Action:  query.Insert,
		Columns: []string{"id", "title", "qty", "extra", "created_at"},
		Rows: [][]any{
			{query.Default{}, "int", json.Number("5"), "kept", query.Default{}},
			{nil, "float", json.Number("5.0"), query.Default{}, nil},
			{query.Default{}, "go float", 5.0, query.Default{}, query.Default{}},
			{query.Default{}, "go fraction", 2.5, query.Default{}, query.Default{}},
			{query.Default{}, "go int", int64(5), query.Default{}, query.Default{}},
		},
	})
	if res.RowsAffected != 5 || len(res.Returned) != 5 {
		t.Fatalf("result %+v", res)
	}
	if len(res.Columns) != 8 || res.Columns[0].Name != "id" {
		t.Fatalf("columns %+v", res.Columns)
	}
	wantData := map[string]string{
		"int":   `{"extra":"kept","qty":5,"title":"int"}`,
		"float": `{"qty":5.0,"title":"float"}`,
		// float64 cannot tell 5 from 5.0: a whole value is stored as an integer.
		"go float":    `{"qty":5,"title":"go float"}`,
		"go fraction": `{"qty":2.5,"title":"go fraction"}`,
		"go int":      `{"qty":5,"title":"go int"}`,
	}
	wantQty := map[string]json.Number{"int": "5", "float": "5.0", "go float": "5", "go fraction": "2.5", "go int": "5"}
	for _, r := range res.Returned {
		id, title := r[0].(string), r[3].(string)
		if !uuidV4.MatchString(id) {
			t.Errorf("id %q is not a lower-case UUID v4", id)
		}
		if r[1] != int64(1_800_000_000) || r[2] != int64(1_800_000_000) {
			t.Errorf("timestamps %v %v", r[1], r[2])
		}
		if r[4] != wantQty[title] {
			t.Errorf("%s: returned qty %#v, want %#v", title, r[4], wantQty[title])
		}
		var data string
		if err := db.QueryRow("SELECT data FROM rows WHERE id = ?", id).Scan(&data); err != nil {
			t.Fatal(err)
		}
		if data != wantData[title] {
			t.Errorf("%s: stored %s, want %s", title, data, wantData[title])
		}
	}
	_, rows := readAll(t, s, query.Plan{Columns: []string{"title", "qty"}, Order: []query.Order{{Column: "title"}}})
	got := map[string]any{}
	for _, r := range rows {
		got[r[0].(string)] = r[1]
	}
	for title, q := range wantQty {
		if got[title] != q {
			t.Errorf("%s: read qty %#v, want %#v", title, got[title], q)
		}
	}
}

func TestUpdateMerge(t *testing.T) {
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	ids := seed(t, s)
	write(t, s, query.Plan{Action: query.Insert, Columns: []string{"title", "extra"}, Rows: [][]any{{"Elder", "x"}}})
	s.now = func() time.Time { return time.Unix(1_800_000_100, 0) }

	res := write(t, s, query.Plan{
		Action: query.Update,
		Where:  cond("title", query.Eq, "Apple"),
		Set: []query.Assign{
			{Column: "qty", Value: json.Number("7.5")},
			{Column: "tags", Value: nil},                           // removes the key
			{Column: "meta", Value: map[string]any{"z": true}},     // replaces the object wholesale
			{Column: "note", Value: "unknown keys are stored too"}, // not in the schema
			{Column: "done", Value: query.Default{}},               // Default{} removes as well
		},
	})
	if res.RowsAffected != 1 {
		t.Errorf("rows affected %d", res.RowsAffected)
	}
	var data string
	var created, updated int64
	if err := db.QueryRow("SELECT data, created_at, updated_at FROM rows WHERE id = ?", ids["Apple"]).Scan(&data, &created, &updated); err != nil {
		t.Fatal(err)
	}
	if want := `{"meta":{"z":true},"note":"unknown keys are stored too","qty":7.5,"title":"Apple"}`; data != want {
		t.Errorf("data %s, want %s", data, want)
	}
	if created != 1_800_000_000 || updated != 1_800_000_100 {
		t.Errorf("created %d updated %d", created, updated)
	}
	var op, hist string
	var version, at int64
	if err := db.QueryRow("SELECT op, data_json, version, recorded_at FROM _row_history WHERE row_id = ? ORDER BY version DESC LIMIT 1", ids["Apple"]).Scan(&op, &hist, &version, &at); err != nil {
		t.Fatal(err)
	}
	if op != "update" || hist != data || version != 2 || at != 1_800_000_100 {
		t.Errorf("history %s v%d at %d: %s", op, version, at, hist)
	}

	// Several rows at once; untouched keys survive in each.
	res = write(t, s, query.Plan{Action: query.Update, Where: cond("qty", query.Lt, int64(8)), Set: []query.Assign{{Column: "done", Value: true}}})
	if res.RowsAffected != 2 {
		t.Errorf("rows affected %d, want 2", res.RowsAffected)
	}
	if got := titles(t, s, cond("done", query.IsTrue), query.Order{Column: "title"}); !slices.Equal(got, []string{"Apple", "banana", "date%"}) {
		t.Errorf("done rows %q", got)
	}
	if got := titles(t, s, cond("tags", query.Eq, []any{"yellow", "fruit"})); !slices.Equal(got, []string{"banana"}) {
		t.Errorf("banana lost its tags: %q", got)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM rows WHERE json_extract(data, '$.extra') = 'x'"); n != 1 {
		t.Errorf("unknown key of a row not updated changed")
	}

	res = write(t, s, query.Plan{Action: query.Update, Where: cond("title", query.Eq, "nobody"), Set: []query.Assign{{Column: "qty", Value: int64(1)}}})
	if res.RowsAffected != 0 {
		t.Errorf("no match affected %d", res.RowsAffected)
	}
	res = write(t, s, query.Plan{Action: query.Update, All: true, Set: []query.Assign{{Column: "qty", Value: int64(1)}}})
	if res.RowsAffected != 5 {
		t.Errorf("update all affected %d", res.RowsAffected)
	}

	refusals := []struct {
		set []query.Assign
		msg string
	}{
		{[]query.Assign{{Column: "title", Value: nil}}, `field "title": required field cannot be deleted via null`},
		{[]query.Assign{{Column: "qty", Value: "many"}}, `field "qty": expected type 'number', got 'string'`},
		{[]query.Assign{{Column: "tags", Value: "x"}}, `field "tags": expected type 'array', got 'string'`},
		{[]query.Assign{{Column: "id", Value: "x"}}, `column "id" is filled by the database`},
		{[]query.Assign{{Column: "created_at", Value: int64(1)}}, `column "created_at" is filled by the database`},
	}
	before := count(t, db, "SELECT COUNT(*) FROM _row_history")
	for _, r := range refusals {
		_, err := s.Write(context.Background(), &query.Plan{Action: query.Update, Table: "items", All: true, Set: r.set})
		if fault.KindOf(err) != fault.Invalid || shown(err) != r.msg {
			t.Errorf("set %v: %v, want Invalid %q", r.set[0].Column, err, r.msg)
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM _row_history"); n != before {
		t.Errorf("refused updates wrote history: %d → %d", before, n)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM rows WHERE json_extract(data, '$.qty') = 1"); n != 5 {
		t.Errorf("a refused update changed rows: %d rows with qty 1", n)
	}
}

func TestDeleteWithHistory(t *testing.T) {
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	ids := seed(t, s)
	var stored string
	if err := db.QueryRow("SELECT data FROM rows WHERE id = ?", ids["banana"]).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	res := write(t, s, query.Plan{Action: query.Delete, Where: cond("title", query.Eq, "banana")})
	if res.RowsAffected != 1 {
		t.Errorf("rows affected %d", res.RowsAffected)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM rows WHERE id = ?", ids["banana"]); n != 0 {
		t.Error("row still there")
	}
	rs, err := db.Query("SELECT version, op, data_json, prev_data_json, table_name FROM _row_history WHERE row_id = ? ORDER BY version", ids["banana"])
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	type entry struct {
		version int64
		op      string
		data    string
		prev    sql.NullString
		table   string
	}
	var got []entry
	for rs.Next() {
		var e entry
		if err := rs.Scan(&e.version, &e.op, &e.data, &e.prev, &e.table); err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	want := []entry{{1, "create", stored, sql.NullString{}, "items"}, {2, "delete", stored, sql.NullString{}, "items"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history\n got %+v\nwant %+v", got, want)
	}

	res = write(t, s, query.Plan{Action: query.Delete, Where: cond("title", query.Eq, "banana")})
	if res.RowsAffected != 0 {
		t.Errorf("second delete affected %d", res.RowsAffected)
	}
	res = write(t, s, query.Plan{Action: query.Delete, All: true})
	if res.RowsAffected != 3 {
		t.Errorf("delete all affected %d", res.RowsAffected)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM _row_history WHERE op = 'delete'"); n != 4 {
		t.Errorf("%d delete entries, want 4", n)
	}
}

func TestHistoryOff(t *testing.T) {
	dir := t.TempDir()
	if err := CreateTable(dir, "log", []byte("table: log\nhistory: off\nfields:\n- name: msg\n  type: string\n")); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), dialects.Config{DSN: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if _, err := src.Write(ctx, &query.Plan{Action: query.Insert, Table: "log", Columns: []string{"msg"}, Rows: [][]any{{"hi"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Write(ctx, &query.Plan{Action: query.Delete, Table: "log", All: true}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, rawDB(t, dbFile(dir, "log")), "SELECT COUNT(*) FROM _row_history"); n != 0 {
		t.Errorf("history: off still wrote %d entries", n)
	}
}

func TestTablesRescanAndSkip(t *testing.T) {
	dir := t.TempDir()
	src, err := Open(context.Background(), dialects.Config{DSN: filepath.Join(dir, "scope"), Schema: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if err := src.Ping(ctx); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("ping of a missing directory: %v", err)
	}
	if tabs, err := src.Tables(ctx); err != nil || len(tabs) != 0 {
		t.Fatalf("missing directory: %v %v", tabs, err)
	}
	scope := filepath.Join(dir, "scope")
	if err := CreateTable(scope, "notes", []byte("table: notes\nfields:\n- name: title\n  type: string\n  required: true\n")); err != nil {
		t.Fatal(err)
	}
	if err := src.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	for name, yaml := range map[string]string{
		"broken":   "table: [",
		"badtype":  "table: badtype\nfields:\n- name: x\n  type: date\n",
		"nofields": "table: nofields\n",
		"_backup":  "",
	} {
		os.MkdirAll(filepath.Join(scope, name), 0o755)
		if yaml != "" {
			os.WriteFile(filepath.Join(scope, name, "schema.yaml"), []byte(yaml), 0o644)
		}
	}
	os.WriteFile(filepath.Join(scope, "stray.txt"), []byte("x"), 0o644)
	tabs, err := src.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 || tabs[0].Name != "notes" || tabs[0].Schema != "app" {
		t.Fatalf("tables %+v", tabs)
	}
	if _, err := src.Read(ctx, &query.Plan{Action: query.Read, Table: "broken"}); fault.KindOf(err) != fault.NotFound {
		t.Errorf("broken table: %v", err)
	}

	// A table added by someone else shows up on the next call.
	if err := CreateTable(scope, "todo", []byte("table: todo\nfields: []\n")); err != nil {
		t.Fatal(err)
	}
	tabs, _ = src.Tables(ctx)
	if len(tabs) != 2 || tabs[1].Name != "todo" {
		t.Fatalf("after create: %+v", tabs)
	}
	// A schema changed on disk is reread.
	os.WriteFile(schemaFile(scope, "todo"), []byte("table: todo\nfields:\n- name: done\n  type: boolean\n  required: true\n"), 0o644)
	future := time.Now().Add(time.Hour)
	os.Chtimes(schemaFile(scope, "todo"), future, future)
	tabs, _ = src.Tables(ctx)
	if c := tabs[1].Columns; len(c) != 4 || c[3].Name != "done" || c[3].Kind != dialects.KindBool || c[3].Nullable {
		t.Errorf("todo columns after change: %+v", c)
	}

	if err := CreateTable(scope, "notes", []byte("table: notes\nfields: []\n")); fault.KindOf(err) != fault.Conflict {
		t.Errorf("create twice: %v", err)
	}
	if err := CreateTable(scope, "../x", []byte("table: x\nfields: []\n")); fault.KindOf(err) != fault.Invalid {
		t.Errorf("bad name: %v", err)
	}
	if err := CreateTable(scope, "x", []byte("table: x\n")); fault.KindOf(err) != fault.Invalid {
		t.Errorf("bad yaml: %v", err)
	}
	if _, err := os.Stat(filepath.Join(scope, "x")); err == nil {
		t.Error("a refused CreateTable left a directory")
	}

	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tables(ctx); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("tables after close: %v", err)
	}
}

func TestOpenRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(context.Background(), dialects.Config{DSN: f}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("open of a file: %v", err)
	}
	if _, err := Open(context.Background(), dialects.Config{DSN: " "}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("open of nothing: %v", err)
	}
}

func TestConcurrentWrites(t *testing.T) {
	s, dir := openItems(t)
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.Write(context.Background(), &query.Plan{Action: query.Insert, Table: "items", Columns: []string{"title", "qty"}, Rows: [][]any{{"w", int64(w*100 + i)}}})
				if err != nil {
					errs <- err
				}
				if _, err := s.Write(context.Background(), &query.Plan{Action: query.Update, Table: "items", Where: cond("title", query.Eq, "w"), Set: []query.Assign{{Column: "done", Value: true}}}); err != nil {
					errs <- err
				}
				rs, err := s.Read(context.Background(), &query.Plan{Action: query.Read, Table: "items", Limit: 3})
				if err != nil {
					errs <- err
					continue
				}
				for rs.Next() {
					rs.Values()
				}
				rs.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db := rawDB(t, dbFile(dir, "items"))
	if n := count(t, db, "SELECT COUNT(*) FROM rows"); n != workers*each {
		t.Errorf("%d rows, want %d", n, workers*each)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM (SELECT row_id FROM _row_history GROUP BY row_id HAVING MAX(version) <> COUNT(*))"); n != 0 {
		t.Errorf("%d rows with gaps in their history versions", n)
	}
}

func TestContextEnds(t *testing.T) {
	s, dir := openItems(t)
	seed(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Read(ctx, &query.Plan{Action: query.Read, Table: "items"}); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("read with a canceled context: %v", err)
	}
	s.timeout = time.Nanosecond
	_, err := s.Write(context.Background(), &query.Plan{Action: query.Delete, Table: "items", All: true})
	if fault.KindOf(err) != fault.Timeout {
		t.Errorf("write past the statement timeout: %v", err)
	}
	if n := count(t, rawDB(t, dbFile(dir, "items")), "SELECT COUNT(*) FROM rows"); n != 4 {
		t.Errorf("timed-out delete removed rows: %d left", n)
	}
}

// shown is the message of err as a caller who sees every field is told it:
// a schema violation's words naming the field (the engine's choice for
// such a caller), else the fault's message.
func shown(err error) string {
	var v *dialects.Violation
	if errors.As(err, &v) && v.Named != "" {
		return v.Named
	}
	return fault.As(err).Message
}
