package pg_test

import (
	"context"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// TestReadByKeyPlannedOnce proves that a read by key, as REST and MCP
// send it (a page of one, no offset), settles on PostgreSQL's generic
// plan: the server stops planning it after its first executions. With
// "LIMIT $n OFFSET $m" the plan cache never chose the generic plan and
// every execution was planned again (generic_plans stayed 0), which cost
// the server about as much as executing the read itself. A DSN that asks
// for plan_cache_mode=force_custom_plan still gets a plan per execution.
func TestReadByKeyPlannedOnce(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, "CREATE TABLE "+db.schema+".keyed (id bigint PRIMARY KEY, name text)")
	db.exec(t, "INSERT INTO "+db.schema+".keyed SELECT g, 'n' || g FROM generate_series(1, 100) g")
	if generic, custom := keyedPlans(t, db, db.dsn); generic == 0 {
		t.Errorf("generic_plans 0, custom_plans %d: every execution was planned again", custom)
	}
	if generic, custom := keyedPlans(t, db, withParam(db.dsn, "plan_cache_mode", "force_custom_plan")); generic != 0 || custom == 0 {
		t.Errorf("with plan_cache_mode=force_custom_plan in the DSN: generic_plans %d, custom_plans %d; want every execution planned", generic, custom)
	}
}

// keyedPlans reads rows of db's "keyed" table by key through a source
// opened on dsn, then a later page, and answers how often the server
// used the generic and a custom plan for the read by key.
func keyedPlans(t *testing.T, db *testDB, dsn string) (generic, custom int64) {
	t.Helper()
	// One connection, so the reads and the look at the server's prepared
	// statements share a session.
	src := db.open(t, dialects.Config{DSN: dsn, MaxConns: 1})
	ctx := context.Background()
	read := func(p *query.Plan) int {
		t.Helper()
		rows, err := src.Read(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for id := int64(1); id <= 12; id++ {
		p := &query.Plan{Action: query.Read, Schema: db.schema, Table: "keyed", Columns: []string{"id", "name"},
			Where: cond("id", query.Eq, id), Limit: 1}
		if n := read(p); n != 1 {
			t.Fatalf("read of id %d: %d rows, want 1", id, n)
		}
	}
	// A later page still reads the right rows (its OFFSET is bound).
	later := &query.Plan{Action: query.Read, Schema: db.schema, Table: "keyed", Columns: []string{"id"},
		Order: []query.Order{{Column: "id"}}, Limit: 10, Offset: 95}
	if n := read(later); n != 5 {
		t.Fatalf("page at offset 95: %d rows, want 5", n)
	}

	// This look is a prepared statement too, and its text holds the
	// pattern: it is left out by name.
	rows, err := src.(dialects.Runner).RunRead(ctx, dialects.Stmt{
		SQL: `SELECT generic_plans, custom_plans FROM pg_prepared_statements
		      WHERE statement LIKE '%"keyed" WHERE%' AND statement NOT LIKE '%pg_prepared_statements%'`})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("the read by key is not a prepared statement of the connection (%v)", rows.Err())
	}
	v, err := rows.Values()
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Fatal("more than one prepared statement reads by key")
	}
	return v[0].(int64), v[1].(int64)
}
