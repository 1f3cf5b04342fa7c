package ms

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Source over a scripted driver (fake_test.go): what it sends, and what it
// makes of the answers.

var guidWire = []byte{0x99, 0xbc, 0xee, 0xa0, 0x0b, 0x9c, 0xf8, 0x4e, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}

func TestReadStreams(t *testing.T) {
	f := &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		return fakeResult{
			cols: []fakeCol{{"id", "BIGINT", false}, {"name", "NVARCHAR", true}, {"price", "DECIMAL", true},
				{"u", "UNIQUEIDENTIFIER", true}, {"at", "DATETIMEOFFSET", true}, {"r", "REAL", true}, {"d", "DATE", true}},
			rows: [][]driver.Value{
				{int64(1), "Ann", []byte("12.50"), guidWire, time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600)),
					float64(float32(1.1)), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
				{int64(2), nil, nil, nil, nil, nil, nil},
			},
		}
	}}
	src := f.source()
	defer src.Close()
	p := &query.Plan{Action: query.Read, Table: "t", Columns: []string{"id", "name", "price", "u", "at", "r", "d"},
		Where: cond("name", query.Like, "a[b"), Limit: 10}
	rows, err := src.Read(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// The statement as rendered, the schema filled in, the pattern adapted.
	if want := "SELECT [id], [name], [price], [u], [at], [r], [d] FROM [dbo].[t] WHERE [name] LIKE @p1" + binaryCollation +
		` ESCAPE '\' ORDER BY (SELECT NULL) OFFSET @p2 ROWS FETCH NEXT @p3 ROWS ONLY`; f.log[0] != "query: "+want {
		t.Errorf("sent %s", f.log[0])
	}
	if a := f.args[0]; len(a) != 3 || a[0].Value != `a\[b` || a[1].Value != int64(0) || a[2].Value != int64(10) {
		t.Errorf("args %+v", a)
	}
	var kinds []dialects.Kind
	for _, c := range rows.Columns() {
		kinds = append(kinds, c.Kind)
	}
	if !slices.Equal(kinds, []dialects.Kind{dialects.KindInt, dialects.KindString, dialects.KindDecimal, dialects.KindUUID,
		dialects.KindTimestampTZ, dialects.KindFloat, dialects.KindDate}) || rows.Columns()[0].Nullable || !rows.Columns()[1].Nullable {
		t.Errorf("columns %+v", rows.Columns())
	}
	var got [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, slices.Clone(v))
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{int64(1), "Ann", json.Number("12.50"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
			time.Date(2024, 1, 2, 2, 4, 5, 0, time.UTC), 1.1, "2024-02-29"},
		{int64(2), nil, nil, nil, nil, nil, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n got %#v\nwant %#v", got, want)
	}
	if rows.Next() {
		t.Error("Next after the end")
	}
}

func TestReadErrors(t *testing.T) {
	ctx := context.Background()
	p := &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}}
	cols := []fakeCol{{"a", "INT", true}}
	convErr := mssql.Error{Number: 245, Class: 16, Message: "Conversion failed"}

	// An error before the first row is Read's own.
	f := &fakeDB{script: func(string, []driver.NamedValue) fakeResult {
		return fakeResult{cols: cols, rows: [][]driver.Value{{int64(1)}}, errAt: 0, err: convErr}
	}}
	_, err := f.source().Read(ctx, p)
	wantKind(t, err, fault.Invalid)

	// The statement refused outright.
	f = &fakeDB{script: func(string, []driver.NamedValue) fakeResult {
		return fakeResult{errAt: -1, err: mssql.Error{Number: 208, Class: 16, Message: "Invalid object name 't'."}}
	}}
	_, err = f.source().Read(ctx, p)
	wantKind(t, err, fault.NotFound)

	// An error mid-stream ends the rows and is kept.
	f = &fakeDB{script: func(string, []driver.NamedValue) fakeResult {
		return fakeResult{cols: cols, rows: [][]driver.Value{{int64(1)}, {int64(2)}, {int64(3)}}, errAt: 2, err: convErr}
	}}
	rows, err := f.source().Read(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d rows before the error, want 2", n)
	}
	wantKind(t, rows.Err(), fault.Invalid)
	wantKind(t, rows.Close(), fault.Invalid)

	// A value a decoder cannot read is Internal, named by its column.
	f = &fakeDB{script: func(string, []driver.NamedValue) fakeResult {
		return fakeResult{cols: []fakeCol{{"a", "DATE", true}}, rows: [][]driver.Value{{"not a time"}}}
	}}
	rows, err = f.source().Read(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal("no row")
	}
	_, err = rows.Values()
	wantKind(t, err, fault.Internal)
	if !strings.Contains(fault.As(err).Message, `"a"`) {
		t.Errorf("message %q", fault.As(err).Message)
	}
	if rows.Next() {
		t.Error("Next after a failed Values")
	}
	_ = rows.Close()
}

func TestTablesFromCatalog(t *testing.T) {
	row := func(obj int64, table, col, declared, base string, maxLen, prec, scale int64, nullable, pk, ident, computed, dc bool, def string) []driver.Value {
		return []driver.Value{obj, table, col, declared, base, maxLen, prec, scale, nullable, pk, ident, computed, dc, def, "", ""}
	}
	f := &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		if len(args) != 1 || args[0].Value != "sales" {
			return fakeResult{errAt: -1, err: fmt.Errorf("schema args %v", args)}
		}
		return fakeResult{cols: make([]fakeCol, 16), rows: [][]driver.Value{
			// By object id, which is not name order.
			row(7, "orders", "id", "int", "int", 4, 10, 0, false, true, true, false, false, ""),
			row(7, "orders", "total", "money", "money", 8, 19, 4, true, false, false, false, true, "((0))"),
			row(9, "Accounts", "code", "ssn", "varchar", 11, 0, 0, true, false, false, false, false, ""),
			row(9, "Accounts", "name", "nvarchar", "nvarchar", 200, 0, 0, false, false, false, false, false, ""),
			row(11, "audit", "rv", "timestamp", "timestamp", 8, 0, 0, false, false, false, false, false, ""),
		}}
	}}
	src := f.source()
	src.schema = "sales"
	tables, err := src.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
		if tb.Schema != "sales" {
			t.Errorf("%s: schema %q", tb.Name, tb.Schema)
		}
	}
	if !slices.Equal(names, []string{"Accounts", "audit", "orders"}) {
		t.Fatalf("tables %v", names)
	}
	want := []dialects.Column{
		{Name: "code", DBType: "ssn", Kind: dialects.KindString, Nullable: true},
		{Name: "name", DBType: "nvarchar(100)", Kind: dialects.KindString},
	}
	if !reflect.DeepEqual(tables[0].Columns, want) {
		t.Errorf("Accounts %+v", tables[0].Columns)
	}
	if c := tables[2].Columns; len(c) != 2 || !c[0].PrimaryKey || !c[0].HasDefault || c[1].Default != "((0))" || c[1].Kind != dialects.KindDecimal {
		t.Errorf("orders %+v", c)
	}
	if c := tables[1].Columns[0]; !c.HasDefault || c.Kind != dialects.KindBytes {
		t.Errorf("audit.rv %+v", c)
	}
	if !strings.Contains(f.log[0], "sys.columns") {
		t.Errorf("sent %s", f.log[0])
	}
}

// outputRows answers an INSERT … OUTPUT INSERTED.* with one row per VALUES
// row, numbering ids from *next; fail makes the statement that holds a
// given name fail as a duplicate.
func outputRows(next *int64, fail string) func(string, []driver.NamedValue) fakeResult {
	return func(q string, args []driver.NamedValue) fakeResult {
		res := fakeResult{cols: []fakeCol{{"id", "BIGINT", false}, {"name", "NVARCHAR", false}}}
		for _, a := range args {
			if a.Value == fail {
				return fakeResult{errAt: -1, err: mssql.Error{Number: 2627, Class: 14, Message: "duplicate"}}
			}
			*next++
			res.rows = append(res.rows, []driver.Value{*next, a.Value})
		}
		return res
	}
}

func TestInsertChunks(t *testing.T) {
	ctx := context.Background()
	plan := func(n int) *query.Plan {
		p := &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"id", "name"}}
		for i := range n {
			p.Rows = append(p.Rows, []any{query.Default{}, fmt.Sprintf("r%d", i)})
		}
		return p
	}

	// One statement: no transaction, rows returned in order.
	var next int64
	f := &fakeDB{script: outputRows(&next, "")}
	res, err := f.source().Write(ctx, plan(3))
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 3 || len(res.Returned) != 3 || res.Returned[2][1] != "r2" || res.Columns[0].Name != "id" {
		t.Errorf("result %+v", res)
	}
	if ev := f.events(); !slices.Equal(ev, []string{"query"}) {
		t.Errorf("events %v", ev)
	}
	if !strings.HasPrefix(f.log[0], "query: INSERT INTO [dbo].[t] ([name]) OUTPUT INSERTED.* VALUES (@p1), (@p2), (@p3)") {
		t.Errorf("sent %s", f.log[0])
	}

	// 2500 rows: three statements of at most 1000 rows in one transaction.
	next = 0
	f = &fakeDB{script: outputRows(&next, "")}
	res, err = f.source().Write(ctx, plan(2500))
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsAffected != 2500 || len(res.Returned) != 2500 || res.Returned[2499][0] != int64(2500) {
		t.Errorf("affected %d, returned %d", res.RowsAffected, len(res.Returned))
	}
	if ev := f.events(); !slices.Equal(ev, []string{"begin", "query", "query", "query", "commit"}) {
		t.Errorf("events %v", ev)
	}
	for i, n := range []int{1000, 1000, 500} {
		if len(f.args[i]) != n {
			t.Errorf("statement %d binds %d values, want %d", i, len(f.args[i]), n)
		}
	}

	// A failure in the last chunk rolls all back.
	next = 0
	f = &fakeDB{script: outputRows(&next, "r2400")}
	_, err = f.source().Write(ctx, plan(2500))
	wantKind(t, err, fault.Conflict)
	if ev := f.events(); !slices.Equal(ev, []string{"begin", "query", "query", "query", "rollback"}) {
		t.Errorf("events %v", ev)
	}
}

func TestUpdateDeleteExec(t *testing.T) {
	ctx := context.Background()
	f := &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		if strings.HasPrefix(q, "DELETE") {
			return fakeResult{errAt: -1, err: mssql.Error{Number: 547, Class: 16, Message: "The DELETE statement conflicted with the REFERENCE constraint"}}
		}
		return fakeResult{n: 4}
	}}
	src := f.source()
	res, err := src.Write(ctx, &query.Plan{Action: query.Update, Table: "t", Set: []query.Assign{{Column: "a", Value: nil}},
		Where: cond("id", query.In, int64(1), int64(2))})
	if err != nil || res.RowsAffected != 4 {
		t.Fatalf("update: %+v, %v", res, err)
	}
	if f.log[0] != "exec: UPDATE [dbo].[t] SET [a] = NULL WHERE [id] IN (@p1, @p2)" {
		t.Errorf("sent %s", f.log[0])
	}
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Table: "t", All: true})
	wantKind(t, err, fault.Invalid)
	if fault.As(err).Message != "a constraint of the table refused the row (a foreign key or a check)" {
		t.Errorf("message %q", fault.As(err).Message)
	}
	if ev := f.events(); !slices.Equal(ev, []string{"exec", "exec"}) {
		t.Errorf("events %v: update and delete are single statements, no transaction", ev)
	}
}
