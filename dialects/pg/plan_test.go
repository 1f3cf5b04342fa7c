package pg_test

import (
	"context"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// TestAggregatePlannedPerCall: an aggregate read is never a named prepared
// statement, so PostgreSQL plans it for its bound values every call and
// never switches it to a generic plan (which, with LIMIT $n, may read the
// groups in index order instead of hashing them); a plain read still is
// one, prepared once. One connection, so the session the statements were
// prepared in is the one pg_prepared_statements shows.
func TestAggregatePlannedPerCall(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, "CREATE TABLE "+db.schema+".sales (id bigint PRIMARY KEY, grp int NOT NULL, qty int)")
	db.exec(t, "INSERT INTO "+db.schema+".sales SELECT g, g % 4, g % 10 FROM generate_series(1, 200) AS g")
	db.exec(t, "CREATE INDEX ON "+db.schema+".sales (grp, id)")
	src := db.open(t, dialects.Config{MaxConns: 1})
	agg := func() *query.Plan {
		return &query.Plan{Action: query.Read, Schema: db.schema, Table: "sales",
			Aggregates: []query.Aggregate{{Func: query.AggCount, Alias: "n"}, {Func: query.AggSum, Column: "qty", Alias: "total"}},
			GroupBy:    []string{"grp"}, Order: []query.Order{{Column: "grp"}}, Limit: 100,
			Where: cond("qty", query.Gt, int64(2))}
	}
	plain := func() *query.Plan {
		return &query.Plan{Action: query.Read, Schema: db.schema, Table: "sales", Columns: []string{"id"},
			Order: []query.Order{{Column: "id"}}, Limit: 10, Where: cond("qty", query.Gt, int64(2))}
	}
	// More calls than the five custom plans before PostgreSQL considers the
	// generic one.
	for range 8 {
		r, err := src.Read(context.Background(), agg())
		got := collect(t, r, err)
		if len(got) != 4 {
			t.Fatalf("aggregate answered %d groups, want 4: %v", len(got), got)
		}
		if err := readAll(src, plain()); err != nil {
			t.Fatal(err)
		}
	}
	r, err := src.(dialects.Runner).RunRead(context.Background(), dialects.Stmt{
		SQL: "SELECT statement FROM pg_prepared_statements WHERE statement LIKE $1", Args: []any{"%sales%"}})
	rows := collect(t, r, err)
	var aggs, plains int
	for _, r := range rows {
		s, _ := r[0].(string)
		switch {
		case strings.Contains(s, "GROUP BY"):
			aggs++
		case strings.Contains(s, `SELECT "id"`):
			plains++
		}
	}
	if aggs != 0 || plains != 1 {
		t.Fatalf("named prepared statements: %d aggregate (want 0), %d plain read (want 1): %v", aggs, plains, rows)
	}
}
