package ma_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/query"
)

// BenchmarkRead reads a 1000-row page of typical columns through the Source
// and, in the same run, through a plain database/sql handler over the same
// driver (a prepared *sql.Stmt, rows scanned into []any). The minimal
// sub-benchmark reports its time as a ratio to the driver's ("x-driver").
func BenchmarkRead(b *testing.B) {
	db := newTestDB(b)
	db.exec(b, `CREATE TABLE {bench} (id bigint PRIMARY KEY, name varchar(40), email varchar(60), qty int,
		price decimal(12,2), active boolean, created timestamp(6) NULL, uid char(36), data json)`)
	db.exec(b, `INSERT INTO {bench}
		WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 1000)
		SELECT n, CONCAT('name ', n), CONCAT('user', n, '@example.com'), n % 100, n * 1.25, n % 2 = 0,
		       TIMESTAMP '2024-01-01 00:00:00' - INTERVAL n MINUTE, UUID(), JSON_OBJECT('k', n, 'tags', JSON_ARRAY('a', 'b'))
		FROM g`)
	cols := []string{"id", "name", "email", "qty", "price", "active", "created", "uid", "data"}
	plan := db.read("bench", &query.Cond{Column: "id", Op: query.Gt, Args: []any{int64(0)}}, cols...)
	plan.Limit = 1000
	st, err := ma.Dialect{}.Render(plan)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var driverNsPerOp float64

	b.Run("driver", func(b *testing.B) {
		pool, err := sql.Open("mysql", db.dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		stmt, err := pool.PrepareContext(ctx, st.SQL)
		if err != nil {
			b.Fatal(err)
		}
		defer stmt.Close()
		vals := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = &vals[i]
		}
		b.ReportAllocs()
		for b.Loop() {
			rows, err := stmt.QueryContext(ctx, st.Args...)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				if err := rows.Scan(dest...); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if err := rows.Close(); err != nil || rows.Err() != nil || n != 1000 {
				b.Fatal(err, rows.Err(), n)
			}
		}
		driverNsPerOp = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})

	b.Run("minimal", func(b *testing.B) {
		src := db.open(b, dialects.Config{})
		b.ReportAllocs()
		for b.Loop() {
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
			if err := rows.Close(); err != nil || n != 1000 {
				b.Fatal(err, n)
			}
		}
		if driverNsPerOp > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/driverNsPerOp, "x-driver")
		}
	})
}
