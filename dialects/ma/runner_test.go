package ma_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// TestRunner: the custom-API ability — names resolve in the source's
// schema, typed arguments bind, a read cannot write, a write's statements
// commit together or not at all, and a ';' never smuggles in a second
// statement.
func TestRunner(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, `CREATE TABLE {runs} (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, ok BOOLEAN, day DATE,
		n DECIMAL(6,2), CONSTRAINT small CHECK (n < 100)) ENGINE=InnoDB`)
	db.exec(t, `INSERT INTO {runs} VALUES (1, 'one', TRUE, '2024-01-02', 1.5)`)
	runs := db.n("runs") // not qualified in the statements below
	src := db.open(t, dialects.Config{})
	r, ok := src.(dialects.Runner)
	if !ok {
		t.Fatal("ma Source is not a dialects.Runner")
	}
	ctx := context.Background()
	if r.Placeholder(3) != "?" {
		t.Fatalf("placeholder %q", r.Placeholder(3))
	}

	rows, err := r.RunRead(ctx, dialects.Stmt{
		SQL:  `SELECT id, name, CONCAT(?, '!') AS shout FROM ` + runs + ` WHERE id = ? AND ok = ? AND day = ? AND n = ?`,
		Args: []any{"hey", int64(1), true, "2024-01-02", "1.5"},
	})
	got := collect(t, rows, err)
	if len(got) != 1 || !slices.Equal(got[0], []any{int64(1), "one", "hey!"}) {
		t.Fatalf("typed read %v", got)
	}
	// NULL binds as NULL.
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT COUNT(*) AS n FROM ` + runs + ` WHERE ? IS NULL`, Args: []any{nil}})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != int64(1) {
		t.Fatalf("null arg %v", got)
	}
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT COUNT(*) AS n FROM ` + runs + ` WHERE ? IS NULL`, Args: []any{"x"}})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != int64(0) {
		t.Fatalf("non-null arg %v", got)
	}

	// A read cannot write.
	for _, w := range []string{
		`DELETE FROM ` + runs,
		`UPDATE ` + runs + ` SET name = 'x'`,
		`INSERT INTO ` + runs + ` (id, name) SELECT 9, 'nine'`,
	} {
		rows, err := r.RunRead(ctx, dialects.Stmt{SQL: w})
		if err == nil {
			_ = rows.Close() // ends the transaction, so the cleanup is not locked out
		}
		wantKind(t, err, fault.Internal)
		if fe := fault.As(err); fe.Message != "a read custom API's statement tried to write" {
			t.Fatalf("%s: %q", w, fe.Message)
		}
	}
	if n := db.count(t, "runs"); n != 1 {
		t.Fatalf("%d rows after reads that tried to write, want 1", n)
	}

	// A write commits all its statements, or none.
	res, err := r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO ` + runs + ` (id, name, ok) VALUES (?, ?, ?)`, Args: []any{int64(2), "two", false}},
		{SQL: `UPDATE ` + runs + ` SET n = ? WHERE id = ?`, Args: []any{"2.5", int64(2)}},
	})
	if err != nil || res.RowsAffected != 2 {
		t.Fatalf("write %v %v", res, err)
	}
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT name, ok, n FROM ` + runs + ` WHERE id = ?`, Args: []any{int64(2)}})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != "two" || got[0][1] != int64(0) || got[0][2] != json.Number("2.50") {
		t.Fatalf("written row %#v", got)
	}
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO ` + runs + ` (id, name) VALUES (?, ?)`, Args: []any{int64(3), "three"}},
		{SQL: `UPDATE ` + runs + ` SET n = ? WHERE id = ?`, Args: []any{"500", int64(3)}},
	})
	wantKind(t, err, fault.Invalid)
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO ` + runs + ` (id, name) VALUES (?, ?)`, Args: []any{int64(4), "four"}},
		{SQL: `INSERT INTO ` + runs + ` (id, name) VALUES (?, ?)`, Args: []any{int64(1), "dup"}},
	})
	wantKind(t, err, fault.Conflict)
	wantNumber(t, err, 1062)
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO ` + runs + ` (id, name) VALUES (?, ?)`, Args: []any{int64(5), nil}},
	})
	wantKind(t, err, fault.Invalid)
	if n := db.count(t, "runs"); n != 2 {
		t.Fatalf("%d rows after failed writes, want 2", n)
	}

	// One statement per call, with or without arguments.
	for _, st := range []dialects.Stmt{
		{SQL: `DELETE FROM ` + runs + ` WHERE id = 2; DROP TABLE ` + runs},
		{SQL: `DELETE FROM ` + runs + ` WHERE id = ?; DROP TABLE ` + runs, Args: []any{int64(2)}},
	} {
		_, err = r.RunWrite(ctx, []dialects.Stmt{st})
		if err == nil {
			t.Fatal("two statements ran")
		}
		wantNumber(t, err, 1064) // a syntax error: the server saw one statement
		_, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT 1; DELETE FROM ` + runs})
		wantNumber(t, err, 1064)
		if n := db.count(t, "runs"); n != 2 {
			t.Fatalf("%d rows after a smuggled statement, want 2", n)
		}
	}
	// An unknown table is the 404 a missing table gets.
	_, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT * FROM no_such_table_here`})
	wantKind(t, err, fault.NotFound)

	// A DSN without a database: the schema alone names it, and the
	// connection is switched to it (USE) for each call.
	cfg, err := mysql.ParseDSN(db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	bare := db.open(t, dialects.Config{DSN: cfg.FormatDSN(), Schema: db.schema, MaxConns: 1}).(dialects.Runner)
	for i := range 2 { // the one connection is reused
		rows, err = bare.RunRead(ctx, dialects.Stmt{SQL: `SELECT name FROM ` + runs + ` ORDER BY id`})
		if got := collect(t, rows, err); len(got) != 2 || got[0][0] != "one"+strings.Repeat("+", i) || got[1][0] != "two" {
			t.Fatalf("read through USE %v", got)
		}
		res, err = bare.RunWrite(ctx, []dialects.Stmt{{SQL: `UPDATE ` + runs + ` SET name = CONCAT(name, ?) WHERE id = ?`, Args: []any{"+", int64(1)}}})
		if err != nil || res.RowsAffected != 1 {
			t.Fatalf("write through USE %v %v", res, err)
		}
	}
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT name FROM ` + runs + ` WHERE id = 1`})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != "one++" {
		t.Fatalf("after writes through USE %v", got)
	}
	// The pool's own statements still work on the switched-back (or
	// discarded) connection.
	if _, err := bare.(dialects.Source).Tables(ctx); err != nil {
		t.Fatal(err)
	}
}
