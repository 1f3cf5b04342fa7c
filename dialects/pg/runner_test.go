package pg_test

import (
	"context"
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// TestRunner: the custom-API ability — names resolve in the source's
// schema, arguments bind in text form to whatever type their place
// infers, a read cannot write, a write's statements commit together or not
// at all, and a ';' never smuggles in a second statement.
func TestRunner(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, `CREATE TABLE runs (id bigint PRIMARY KEY, name text NOT NULL, ok boolean, day date, at timestamptz, u uuid, n numeric CHECK (n < 100))`)
	db.exec(t, `INSERT INTO runs VALUES (1, 'one', true, '2024-01-02', '2024-01-02T03:04:05Z', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 1.5)`)
	src := db.open(t, dialects.Config{})
	r, ok := src.(dialects.Runner)
	if !ok {
		t.Fatal("pg Source is not a dialects.Runner")
	}
	ctx := context.Background()
	if r.Placeholder(3) != "$3" {
		t.Fatalf("placeholder %q", r.Placeholder(3))
	}

	rows, err := r.RunRead(ctx, dialects.Stmt{
		SQL:  `SELECT id, name, $7 || '!' AS shout FROM runs WHERE id = $1 AND ok = $2 AND day = $3 AND at = $4 AND u = $5 AND n = $6`,
		Args: []any{int64(1), true, "2024-01-02", "2024-01-02T03:04:05Z", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "1.5", "hey"},
	})
	got := collect(t, rows, err)
	if len(got) != 1 || !slices.Equal(got[0], []any{int64(1), "one", "hey!"}) {
		t.Fatalf("typed read %v", got)
	}
	// NULL binds as NULL.
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT count(*) AS n FROM runs WHERE $1::text IS NULL`, Args: []any{nil}})
	if got := collect(t, rows, err); got[0][0] != int64(1) {
		t.Fatalf("null arg %v", got)
	}

	// A read cannot write, even through a data-modifying CTE.
	_, err = r.RunRead(ctx, dialects.Stmt{SQL: `WITH d AS (DELETE FROM runs RETURNING id) SELECT * FROM d`})
	wantKind(t, err, fault.Internal)
	if db.count(t, "runs") != 1 {
		t.Fatal("a read deleted rows")
	}

	// A write commits all its statements, or none.
	res, err := r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO runs (id, name) VALUES ($1, $2)`, Args: []any{int64(2), "two"}},
		{SQL: `UPDATE runs SET n = $1 WHERE id = $2 RETURNING id`, Args: []any{"2.5", int64(2)}},
	})
	if err != nil || res.RowsAffected != 2 {
		t.Fatalf("write %v %v", res, err)
	}
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO runs (id, name) VALUES ($1, $2)`, Args: []any{int64(3), "three"}},
		{SQL: `UPDATE runs SET n = $1 WHERE id = $2`, Args: []any{"500", int64(3)}},
	})
	wantKind(t, err, fault.Invalid)
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO runs (id, name) VALUES ($1, $2)`, Args: []any{int64(4), "four"}},
		{SQL: `INSERT INTO runs (id, name) VALUES ($1, $2)`, Args: []any{int64(1), "dup"}},
	})
	wantKind(t, err, fault.Conflict)
	if n := db.count(t, "runs"); n != 2 {
		t.Fatalf("%d rows after failed writes, want 2", n)
	}

	// One statement per call, even without arguments.
	_, err = r.RunWrite(ctx, []dialects.Stmt{{SQL: `DELETE FROM runs WHERE id = 2; DROP TABLE runs`}})
	if err == nil {
		t.Fatal("two statements ran")
	}
	if n := db.count(t, "runs"); n != 2 {
		t.Fatalf("%d rows after a smuggled statement, want 2", n)
	}
	// An unknown table is the 404 a missing table gets.
	_, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT * FROM pg_namespace_nope`})
	wantKind(t, err, fault.NotFound)
}
