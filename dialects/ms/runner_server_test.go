package ms_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// TestRunnerServer runs custom statements on a real SQL Server, in tables
// of the test user's default schema (where names not qualified resolve).
func TestRunnerServer(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skip("no SQL Server on this machine: set " + dsnEnv + " to run")
	}
	db := newTestDB(t)
	var def string
	if err := db.admin.QueryRow("SELECT SCHEMA_NAME()").Scan(&def); err != nil {
		t.Fatal(err)
	}
	table := db.schema + "_runs" // unique, in the default schema
	db.exec(t, "CREATE TABLE ["+table+"] (id bigint PRIMARY KEY, name nvarchar(20) NOT NULL, ok bit, n int CHECK (n < 100))")
	db.drops = append(db.drops, "DROP TABLE ["+def+"].["+table+"]")
	db.exec(t, "INSERT INTO ["+table+"] VALUES (1, N'one', 1, 1)")
	src, err := dialects.Open(context.Background(), "ms", dialects.Config{DSN: dsn, Schema: def})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := src.(dialects.Runner)
	ctx := context.Background()
	rows, err := r.RunRead(ctx, dialects.Stmt{SQL: "SELECT id, name, @p1 + N'!' AS shout FROM " + table + " WHERE id = @p2 AND ok = @p3 AND @p4 IS NULL",
		Args: []any{"hey", int64(1), true, nil}})
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
	if len(got) != 1 || !slices.Equal(got[0], []any{int64(1), "one", "hey!"}) {
		t.Fatalf("typed read %v", got)
	}
	// A read's write is rolled back.
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: "DELETE FROM " + table + " OUTPUT DELETED.id"})
	if err != nil {
		t.Fatal(err)
	}
	_ = rows.Close()
	if n := db.countIn(t, def, table); n != 1 {
		t.Fatalf("%d rows after a read that deleted, want 1", n)
	}
	res, err := r.RunWrite(ctx, []dialects.Stmt{
		{SQL: "INSERT INTO " + table + " (id, name) VALUES (@p1, @p2)", Args: []any{int64(2), "two"}},
		{SQL: "UPDATE " + table + " SET n = @p1 WHERE id = @p2", Args: []any{int64(5), int64(2)}},
	})
	if err != nil || res.RowsAffected != 2 {
		t.Fatalf("write %v %v", res, err)
	}
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: "INSERT INTO " + table + " (id, name) VALUES (@p1, @p2)", Args: []any{int64(3), "three"}},
		{SQL: "INSERT INTO " + table + " (id, name) VALUES (@p1, @p2)", Args: []any{int64(1), "dup"}},
	})
	if fault.KindOf(err) != fault.Conflict {
		t.Fatalf("duplicate key: %v", err)
	}
	_, err = r.RunWrite(ctx, []dialects.Stmt{{SQL: "UPDATE " + table + " SET n = @p1", Args: []any{int64(500)}}})
	if fault.KindOf(err) != fault.Invalid {
		t.Fatalf("check: %v", err)
	}
	if n := db.countIn(t, def, table); n != 2 {
		t.Fatalf("%d rows after failed writes, want 2", n)
	}
}

// countIn counts the rows of schema.table.
func (db *testDB) countIn(t testing.TB, schema, table string) int64 {
	t.Helper()
	var n int64
	if err := db.admin.QueryRow("SELECT COUNT_BIG(*) FROM [" + schema + "].[" + table + "]").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
