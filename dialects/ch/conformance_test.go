package ch_test

import (
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
)

// TestConformance runs the shared suite on the real ClickHouse server, in a
// fresh database holding the fixture tables. The fixtures and the lacks
// follow the server's version: 18.16, the Debian package the tests use,
// has neither Bool nor DateTime64.
func TestConformance(t *testing.T) {
	db := newTestDB(t, "minimal_conf_")
	boolType := db.atLeast(21, 12)
	dt64 := db.atLeast(20, 1)

	tz := "Nullable(DateTime('UTC'))"
	if dt64 {
		tz = "Nullable(DateTime64(6, 'UTC'))"
	}
	items := "id Int64, name String, qty Nullable(Int64), ratio Nullable(Float64), "
	types := "name String, i64 Nullable(Int64), dec Nullable(Decimal(20, 6)), f64 Nullable(Float64), "
	if boolType {
		items += "active Nullable(Bool), "
		types += "b Nullable(Bool), "
	}
	items += "note Nullable(String)"
	types += "s Nullable(String), d Nullable(Date), tz " + tz + ", u Nullable(UUID)"
	for _, sql := range []string{
		"CREATE TABLE " + db.name + ".conf_items (" + items + ") ENGINE = MergeTree ORDER BY id",
		"CREATE TABLE " + db.name + ".conf_writes (id Int64, name String, qty Nullable(Int64), n Nullable(Int64) DEFAULT 7) ENGINE = MergeTree ORDER BY id",
		"CREATE TABLE " + db.name + ".conf_types (" + types + ") ENGINE = MergeTree ORDER BY tuple()",
		// Counting 10^11 numbers takes far longer than the 3 s asked for.
		"CREATE VIEW " + db.name + ".conf_slow AS SELECT count() AS n FROM numbers(100000000000)",
	} {
		db.exec(t, sql)
	}

	lacks := dialecttest.Lacks{
		Timestamp: "ClickHouse has no zone-less timestamp: DateTime and DateTime64 store an instant (Unix time)",
		JSON:      "ClickHouse 18.x has no JSON type (a String holding JSON is not one)",
		Bytes:     "ClickHouse's String holds arbitrary bytes; there is no binary type distinct from text",
		Array:     "an Array cannot be Nullable in ClickHouse, and the round-trip columns must hold NULL",

		GeneratedKeys:   "ClickHouse has no auto-increment, identity or serial column",
		ReturningInsert: "ClickHouse has no RETURNING or OUTPUT clause, nor a last insert id",
		Unique:          "ClickHouse has no unique constraints: the primary key orders the data, it does not make it unique",
		Upsert:          "ClickHouse has no unique constraints, so an insert has no duplicate to resolve",
		ScopedUpsert:    "ClickHouse has no upsert at all (see Upsert)",
		ReturnUpdate:    "ClickHouse updates are asynchronous mutations (ALTER TABLE … UPDATE) that answer no rows",
		ReturnDelete:    "ClickHouse deletes are asynchronous mutations (ALTER TABLE … DELETE) that answer no rows",
	}
	if !boolType {
		lacks.Bool = "ClickHouse before 21.12 has no boolean type (UInt8 is an integer)"
	}
	if !dt64 {
		lacks.Microseconds = "ClickHouse before 20.1 has only DateTime, which keeps whole seconds"
	}
	dialecttest.RunConformance(t, dialecttest.Harness{
		Type:   "ch",
		Config: dialects.Config{DSN: db.dsn, Schema: db.name},
		Lacks:  lacks,
		// ClickHouse puts NULL last both ways by default; the dialect
		// writes NULLS LAST / NULLS FIRST so that it sorts as PostgreSQL.
		NullOrder:  dialecttest.NullsLargest,
		TimeDigits: 0,
		// An insert is always one statement (one block).
		MaxInsertValues: 0,
		Addr:            db.addr,
		ViaProxy:        func(addr string) string { return db.withAddr(t, addr) },
	})
}
