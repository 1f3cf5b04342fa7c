package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// fillSQL makes $1 rows of varied, deterministic values: names of several
// lengths, prices 0.01..999.99, NULLs in every nullable column at different
// rates, timestamps over five years with microseconds, and notes that need
// CSV quoting (commas, double quotes), are non-ASCII or are long; grp, the
// column the scoped read's row scope filters on, splits the ids into ten
// consecutive runs of $2 rows (see groupSize).
const fillSQL = `
INSERT INTO ` + benchSchema + `.` + benchTable + ` (id, name, price, qty, active, created, note, grp)
SELECT g,
       (ARRAY['Widget','Gadget','Sprocket','Gizmo','Bracket','Flange','Valve','Hinge','Bolt','Gear'])[1 + g % 10]
           || ' ' || upper(substr(md5(g::text), 1, 3 + (g % 6)::int)),
       CASE WHEN g % 97 = 0 THEN NULL ELSE ((g * 7919) % 99999 + 1)::numeric / 100 END,
       CASE WHEN g % 89 = 0 THEN NULL ELSE ((g * 31) % 500)::int END,
       CASE WHEN g % 101 = 0 THEN NULL ELSE g % 3 <> 0 END,
       CASE WHEN g % 53 = 0 THEN NULL ELSE
           timestamptz '2020-01-01 00:00:00+00'
           + ((g * 104729) % 157680000) * interval '1 second'
           + (g % 1000000) * interval '1 microsecond' END,
       CASE g % 5
           WHEN 0 THEN NULL
           WHEN 1 THEN 'ships in ' || (1 + g % 14) || ' days, handle with care'
           WHEN 2 THEN 'customer said "fragile" - ' || substr(md5(g::text), 1, 8)
           WHEN 3 THEN repeat(md5((g * 3)::text), 1 + (g % 3)::int)
           ELSE 'café order #' || g || ' für Zoë'
       END,
       ((g - 1) / $2::bigint)::int
FROM generate_series(1, $1::bigint) AS g`

// createData drops and recreates the bench schema and fills its table. The
// index on (grp, id) serves the scoped read (grp = $1 ORDER BY id) the way
// the primary key serves the unscoped one: a group's rows are consecutive
// in id and on disk, so both reads touch as many pages.
func createData(ctx context.Context, conn *pgx.Conn, rows int) error {
	stmts := []struct {
		sql  string
		args []any
	}{
		{"DROP SCHEMA IF EXISTS " + benchSchema + " CASCADE", nil},
		{"CREATE SCHEMA " + benchSchema, nil},
		{`CREATE TABLE ` + benchSchema + `.` + benchTable + ` (
			id      bigint PRIMARY KEY,
			name    text NOT NULL,
			price   numeric(12,2),
			qty     int,
			active  bool,
			created timestamptz,
			note    text,
			grp     int NOT NULL)`, nil},
		{fillSQL, []any{rows, groupSize(rows)}},
		{"CREATE INDEX ON " + benchSchema + "." + benchTable + " (grp, id)", nil},
		// VACUUM as well as ANALYZE: it sets the hint bits and the
		// visibility map now, so the first full read (the CSV stream) does
		// not pay for writing them and the later one (JSON) does not get it
		// for free.
		{"VACUUM (ANALYZE) " + benchSchema + "." + benchTable, nil},
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("prepare data: %w", err)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+benchSchema+"."+benchTable).Scan(&n); err != nil {
		return fmt.Errorf("prepare data: %w", err)
	}
	if n != int64(rows) {
		return fmt.Errorf("prepare data: table has %d rows, want %d", n, rows)
	}
	return nil
}

// groupSize is the number of consecutive ids in each of the ten values of
// grp: grp = (id-1) / groupSize, 0..9. (With grp = id % 10 every page of the
// table would hold every group, and a group's 100 rows would be spread over
// ten times as many pages as an unscoped page's; PostgreSQL then prefers
// the primary key with a filter, and the scoped read measures the database,
// not the gateway.)
func groupSize(rows int) int { return (rows + 9) / 10 }
