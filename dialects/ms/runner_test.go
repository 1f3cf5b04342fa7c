package ms

import (
	"context"
	"database/sql/driver"
	"slices"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// runnerFake answers the default-schema query with schema and every other
// statement from other.
func runnerFake(schema string, other func(q string, args []driver.NamedValue) fakeResult) *fakeDB {
	return &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		if q == defaultSchemaSQL {
			return fakeResult{cols: []fakeCol{{"s", "NVARCHAR", true}}, rows: [][]driver.Value{{schema}}}
		}
		return other(q, args)
	}}
}

// TestRunnerFake: RunRead runs in a transaction it always rolls back,
// RunWrite commits only when every statement succeeded, arguments travel
// bound, and a source whose schema is not the user's default one is
// refused before anything runs.
func TestRunnerFake(t *testing.T) {
	ctx := context.Background()
	f := runnerFake("dbo", func(q string, args []driver.NamedValue) fakeResult {
		if strings.HasPrefix(q, "INSERT") && args[0].Value == int64(1) {
			return fakeResult{err: mssql.Error{Number: errDuplicateKey, Message: "Violation of PRIMARY KEY constraint"}, errAt: -1}
		}
		return fakeResult{cols: []fakeCol{{"id", "BIGINT", false}, {"name", "NVARCHAR", true}},
			rows: [][]driver.Value{{int64(7), "seven"}}, n: 1}
	})
	src := f.source()
	defer src.Close()
	var r dialects.Runner = src
	if r.Placeholder(2) != "@p2" {
		t.Fatalf("placeholder %q", r.Placeholder(2))
	}
	rows, err := r.RunRead(ctx, dialects.Stmt{SQL: "SELECT id, name FROM t WHERE id = @p1 AND ok = @p2 AND n IS NULL OR @p3 IS NULL AND s = @p4",
		Args: []any{int64(7), true, nil, "x"}})
	if err != nil {
		t.Fatal(err)
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
	if len(got) != 1 || !slices.Equal(got[0], []any{int64(7), "seven"}) {
		t.Fatalf("rows %v", got)
	}
	if ev := f.events(); !slices.Equal(ev, []string{"begin", "query", "query", "rollback"}) {
		t.Fatalf("read events %v", ev)
	}
	if a := f.args[len(f.args)-1]; len(a) != 4 || a[0].Value != int64(7) || a[1].Value != true || a[2].Value != nil || a[3].Value != "x" {
		t.Fatalf("args %+v", a)
	}

	f.log, f.args = nil, nil
	res, err := r.RunWrite(ctx, []dialects.Stmt{
		{SQL: "UPDATE t SET name = @p1", Args: []any{"a"}},
		{SQL: "INSERT INTO t (id) VALUES (@p1)", Args: []any{int64(2)}},
	})
	if err != nil || res.RowsAffected != 2 {
		t.Fatalf("write %v %v", res, err)
	}
	if ev := f.events(); !slices.Equal(ev, []string{"begin", "query", "exec", "exec", "commit"}) {
		t.Fatalf("write events %v", ev)
	}

	f.log, f.args = nil, nil
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: "UPDATE t SET name = @p1", Args: []any{"a"}},
		{SQL: "INSERT INTO t (id) VALUES (@p1)", Args: []any{int64(1)}},
		{SQL: "DELETE FROM t"},
	})
	if fault.KindOf(err) != fault.Conflict {
		t.Fatalf("duplicate key: %v", err)
	}
	if ev := f.events(); !slices.Equal(ev, []string{"begin", "query", "exec", "exec", "rollback"}) {
		t.Fatalf("failed write events %v", ev)
	}

	// Another default schema: refused before the statement is sent.
	g := runnerFake("sales", func(string, []driver.NamedValue) fakeResult {
		t.Fatal("a statement ran")
		return fakeResult{}
	})
	other := g.source()
	defer other.Close()
	_, err = other.RunRead(ctx, dialects.Stmt{SQL: "SELECT 1"})
	if fault.KindOf(err) != fault.Unsupported || !strings.Contains(err.Error(), `names resolve in "sales", the source is "dbo"`) {
		t.Fatalf("other schema read: %v", err)
	}
	_, err = other.RunWrite(ctx, []dialects.Stmt{{SQL: "DELETE FROM t"}})
	if fault.KindOf(err) != fault.Unsupported {
		t.Fatalf("other schema write: %v", err)
	}
	if ev := g.events(); !slices.Equal(ev, []string{"begin", "query", "rollback", "begin", "query", "rollback"}) {
		t.Fatalf("other schema events %v", ev)
	}
}
