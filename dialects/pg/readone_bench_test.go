package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// BenchmarkReadOne is the per-call fixed cost of a read: one row by primary
// key through the Source, configured as the gateway configures it (an
// acquire timeout and a statement timeout), under a context of its own per
// call as a server request has (a cancelCtx, so the call registers with
// it). Its allocs/op are the read's own beside the request context's one.
func BenchmarkReadOne(b *testing.B) {
	db := newTestDB(b)
	db.exec(b, `CREATE TABLE one AS
		SELECT g::int8 AS id, 'item ' || g AS name, (g * 1.25)::numeric(12,2) AS price, (g % 100)::int4 AS qty,
		       g % 2 = 0 AS active, now() AS created, NULL::text AS note, (g % 10)::int4 AS grp
		FROM generate_series(1, 1000) g`)
	db.exec(b, `ALTER TABLE one ADD PRIMARY KEY (id)`)
	plan := &query.Plan{Action: query.Read, Schema: db.schema, Table: "one",
		Columns: []string{"id", "name", "price", "qty", "active", "created", "note", "grp"},
		Where:   &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(7)}}, Limit: 1}
	src := db.open(b, dialects.Config{AcquireTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second})
	read := func(ctx context.Context) { readPage(b, ctx, src, plan, 1) }
	read(context.Background()) // connect and prepare outside the loop
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		read(ctx)
		cancel()
	}
}

// readPage reads plan through src and fails b unless it gives want rows,
// each with its values.
func readPage(b *testing.B, ctx context.Context, src dialects.Source, plan *query.Plan, want int) {
	rows, err := src.Read(ctx, plan)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Close(); err != nil || n != want {
		b.Fatal(err, n)
	}
}
