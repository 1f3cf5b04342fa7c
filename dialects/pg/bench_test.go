package pg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/query"
)

// BenchmarkRead reads a 1000-row page of typical columns through the Source
// and, in the same run, through a plain pgx handler (pool.Query +
// rows.Values). The minimal sub-benchmark reports its time as a ratio to
// pgx's ("x-pgx").
func BenchmarkRead(b *testing.B) {
	db := newTestDB(b)
	db.exec(b, `CREATE TABLE bench AS
		SELECT g::int8 AS id, 'name ' || g AS name, 'user' || g || '@example.com' AS email, (g % 100)::int4 AS qty,
		       (g * 1.25)::numeric(12,2) AS price, g % 2 = 0 AS active, now() - g * interval '1 minute' AS created,
		       gen_random_uuid() AS uid, jsonb_build_object('k', g, 'tags', jsonb_build_array('a', 'b')) AS data
		FROM generate_series(1, 1000) g`)
	cols := []string{"id", "name", "email", "qty", "price", "active", "created", "uid", "data"}
	plan := &query.Plan{Action: query.Read, Schema: db.schema, Table: "bench", Columns: cols,
		Where: &query.Cond{Column: "id", Op: query.Gt, Args: []any{int64(0)}}, Limit: 1000}
	st, err := pg.Dialect{}.Render(plan)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var pgxNsPerOp float64

	b.Run("pgx", func(b *testing.B) {
		pool, err := pgxpool.New(ctx, db.dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		b.ReportAllocs()
		for b.Loop() {
			rows, err := pool.Query(ctx, st.SQL, st.Args...)
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
			if rows.Close(); rows.Err() != nil || n != 1000 {
				b.Fatal(rows.Err(), n)
			}
		}
		pgxNsPerOp = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})

	b.Run("minimal", func(b *testing.B) {
		src := db.open(b, dialects.Config{})
		b.ReportAllocs()
		for b.Loop() {
			readPage(b, ctx, src, plan, 1000)
		}
		if pgxNsPerOp > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pgxNsPerOp, "x-pgx")
		}
	})
}
