package ch_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// TestRunner: the custom-API ability on ClickHouse — names resolve in the
// source's schema (not the DSN's database), typed arguments bind, a read
// cannot write, a write is one statement (a mutation waited for), and a
// ';' never smuggles in a second statement.
func TestRunner(t *testing.T) {
	db := newTestDB(t, "runner_")
	db.exec(t, `CREATE TABLE `+db.name+`.runs (id Int64, name String, ok UInt8, day Date, n Nullable(Int32))
		ENGINE = MergeTree ORDER BY id`)
	db.exec(t, `INSERT INTO `+db.name+`.runs SELECT 1, 'one', 1, toDate('2024-01-02'), NULL`)
	// The schema is the test database; the DSN names another.
	src := db.open(t, dialects.Config{StatementTimeout: 20 * time.Second})
	r, ok := src.(dialects.Runner)
	if !ok {
		t.Fatal("ch Source is not a dialects.Runner")
	}
	ctx := context.Background()
	if r.Placeholder(2) != "?" {
		t.Fatalf("placeholder %q", r.Placeholder(2))
	}

	rows, err := r.RunRead(ctx, dialects.Stmt{
		SQL:  `SELECT id, name, concat(?, '!') AS shout FROM runs WHERE id = ? AND ok = ? AND day = toDate(?) AND isNull(n) = isNull(?)`,
		Args: []any{"it's", int64(1), true, "2024-01-02", nil},
	})
	got := collect(t, rows, err)
	if len(got) != 1 || !slices.Equal(got[0], []any{int64(1), "one", "it's!"}) {
		t.Fatalf("typed read %#v", got)
	}
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT count() AS c FROM runs WHERE name = ?`, Args: []any{"one' OR 1 = 1 --"}})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != json.Number("0") {
		t.Fatalf("injection-looking value %#v", got)
	}

	// The read-only setting goes along with a caller's deadline, which the
	// driver sends as max_execution_time, on a source without a timeout.
	plain := db.open(t, dialects.Config{}).(dialects.Runner)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rows, err = plain.RunRead(dctx, dialects.Stmt{SQL: `SELECT name FROM runs WHERE id = ?`, Args: []any{int64(1)}})
	if got := collect(t, rows, err); len(got) != 1 || got[0][0] != "one" {
		t.Fatalf("read with a deadline %#v", got)
	}
	_, err = plain.RunRead(dctx, dialects.Stmt{SQL: `ALTER TABLE runs DELETE WHERE 1 = 1`})
	wantKind(t, err, fault.Internal)

	// A read cannot write.
	for _, w := range []string{
		`INSERT INTO runs SELECT 9, 'nine', 0, toDate('2024-01-01'), NULL`,
		`ALTER TABLE runs DELETE WHERE 1 = 1`,
		`SELECT 1 SETTINGS readonly = 0`,
	} {
		rows, err := r.RunRead(ctx, dialects.Stmt{SQL: w})
		if err == nil {
			_ = rows.Close()
		}
		wantKind(t, err, fault.Internal)
		if fe := fault.As(err); fe.Message != "a read custom API's statement tried to write" {
			t.Fatalf("%s: %q", w, fe.Message)
		}
	}
	if n := db.count(t, "runs"); n != 1 {
		t.Fatalf("%d rows after reads that tried to write, want 1", n)
	}

	// A write is one statement: an INSERT … SELECT, or a mutation that is
	// done when RunWrite returns.
	res, err := r.RunWrite(ctx, []dialects.Stmt{{SQL: `INSERT INTO runs (id, name, ok, day) SELECT ?, ?, ?, toDate(?)`,
		Args: []any{int64(2), "two", false, "2024-03-04"}}})
	// Servers before 19.x report no written rows: 0 is "unknown".
	if want := map[bool]int64{false: 0, true: 1}[db.atLeast(19, 0)]; err != nil || res.RowsAffected != want {
		t.Fatalf("insert %v %v, want %d rows", res, err, want)
	}
	res, err = r.RunWrite(ctx, []dialects.Stmt{{SQL: `ALTER TABLE runs UPDATE name = concat(name, ?) WHERE id = ?`, Args: []any{"!", int64(2)}}})
	if err != nil || res.RowsAffected != 0 {
		t.Fatalf("mutation %v %v", res, err)
	}
	rows, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT id, name, ok FROM runs ORDER BY id`})
	if got := collect(t, rows, err); len(got) != 2 || !slices.Equal(got[1], []any{int64(2), "two!", int64(0)}) {
		t.Fatalf("after writes %#v", got)
	}
	if n := db.pendingMutations(t, "runs"); n != 0 {
		t.Fatalf("%d mutations pending after RunWrite", n)
	}
	_, err = r.RunWrite(ctx, []dialects.Stmt{
		{SQL: `INSERT INTO runs (id, name) SELECT ?, ?`, Args: []any{int64(3), "three"}},
		{SQL: `INSERT INTO runs (id, name) SELECT ?, ?`, Args: []any{int64(4), "four"}},
	})
	wantKind(t, err, fault.Unsupported)
	if msg := fault.As(err).Message; !strings.Contains(msg, "ClickHouse has no transactions") || !strings.Contains(msg, "single statement") {
		t.Fatalf("message %q", msg)
	}

	// One statement per query, with or without arguments.
	for _, st := range []dialects.Stmt{
		{SQL: `ALTER TABLE runs DELETE WHERE id = 2; DROP TABLE runs`},
		{SQL: `ALTER TABLE runs DELETE WHERE id = ?; DROP TABLE runs`, Args: []any{int64(2)}},
	} {
		if _, err := r.RunWrite(ctx, []dialects.Stmt{st}); err == nil {
			t.Fatal("two statements ran")
		}
	}
	if _, err := r.RunRead(ctx, dialects.Stmt{SQL: `SELECT 1; DROP TABLE runs`}); err == nil {
		t.Fatal("two statements ran")
	}
	if n := db.count(t, "runs"); n != 2 {
		t.Fatalf("%d rows after smuggled statements, want 2", n)
	}
	// An unknown table is the 404 a missing table gets.
	_, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT * FROM no_such_table_here`})
	wantKind(t, err, fault.NotFound)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = r.RunRead(ctx, dialects.Stmt{SQL: `SELECT 1`})
	wantKind(t, err, fault.Unavailable)
}
