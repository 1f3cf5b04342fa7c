package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/engine"
)

// TestLiveSchemaChange drops columns under a gateway whose catalog is
// fresh (the refresh interval is 30 s) on PostgreSQL, MariaDB and
// ClickHouse. A read that meets the dropped column refreshes the catalog
// and is run again: it answers 200 without the column, not a 500. A
// read naming the column then answers 400 unknown column. A write that
// meets a dropped column is not retried: it answers 409 CONFLICT, and the
// same write sent again is a 400 unknown column, the catalog being fresh.
func TestLiveSchemaChange(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("lsc", map[string][]string{
		"pg": {`CREATE TABLE {db}.t (id bigint PRIMARY KEY, a text, b text, c text)`},
		"ma": {`CREATE TABLE {db}.t (id bigint PRIMARY KEY, a text, b text, c text)`},
		"ch": {`CREATE TABLE {db}.t (id Int64, a String, b String, c String) ENGINE = MergeTree ORDER BY id`},
	})
	exec := map[string]func(q string){
		"pg": func(q string) {
			c, err := pgx.Connect(ctx, dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		},
		"ma": func(q string) {
			c, err := sql.Open("mysql", dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Exec(q); err != nil {
				t.Fatal(err)
			}
		},
		"ch": func(q string) {
			opts, err := clickhouse.ParseDSN(dialecttest.DSN(t, "MINIMAL_TEST_CH_DSN"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := clickhouse.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, typ := range []string{"pg", "ma", "ch"} {
		t.Run(typ, func(t *testing.T) {
			path := auto + "/" + typ + "/" + name + "/t"
			g.waitFor("/" + typ + "/" + name + "/t?ps=1&pg=0")
			expect(t, g.do("POST", path, g.admin, map[string]any{"id": 1, "a": "x", "b": "y", "c": "z"}), 201)
			expect(t, g.do("GET", path+"?ps=10&pg=0", g.admin, nil), 200) // the catalog knows b and c

			exec[typ]("ALTER TABLE " + name + ".t DROP COLUMN b")
			r := g.do("GET", path+"?ps=10&pg=0", g.admin, nil)
			expect(t, r, 200)
			if rows := r.data(t); len(rows) != 1 || rows[0]["a"] != "x" || rows[0]["b"] != nil || len(rows[0]) != 3 {
				t.Errorf("read after a dropped column: %s", r.body)
			}
			r = g.do("GET", path+"?ps=10&pg=0&fc=id,b", g.admin, nil)
			if expect(t, r, 400); !strings.Contains(r.errorMessage(t), `unknown column "b"`) {
				t.Errorf("read of the dropped column: %s", r.body)
			}

			exec[typ]("ALTER TABLE " + name + ".t DROP COLUMN c")
			r = g.do("PUT", path+"?id=eq.1", g.admin, map[string]any{"c": "new"})
			if expect(t, r, 409); !strings.Contains(r.errorMessage(t), "changed") {
				t.Errorf("write to a dropped column: %s", r.body)
			}
			r = g.do("PUT", path+"?id=eq.1", g.admin, map[string]any{"c": "new"})
			if expect(t, r, 400); !strings.Contains(r.errorMessage(t), `unknown column "c"`) {
				t.Errorf("write after the refresh: %s", r.body)
			}
		})
	}
}

// TestReloadAndNoTablesWarning: a column added in the database shows in
// reads once POST …/databases/{type}/{schema}/reload has read the tables
// again, at once (the refresh interval is 30 s); reload and the connection
// test count the tables, and warn when a schema has none the gateway can
// see. Reloading an unregistered database is a 404.
func TestReloadAndNoTablesWarning(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("rl", map[string][]string{
		"pg": {`CREATE TABLE {db}.t (id bigint PRIMARY KEY, a text)`},
		"ma": {`CREATE TABLE {db}.t (id bigint PRIMARY KEY, a text)`},
	})
	empty := g.dialectDBs("rle", map[string][]string{"pg": nil, "ma": nil})
	admin := api.AdminPrefix + "/orgs/demo/projects/demo/databases/"
	for _, typ := range []string{"pg", "ma"} {
		t.Run(typ, func(t *testing.T) {
			path := auto + "/" + typ + "/" + name + "/t"
			g.waitFor("/" + typ + "/" + name + "/t?ps=1&pg=0")
			expect(t, g.do("POST", path, g.admin, map[string]any{"id": 1, "a": "x"}), 201)
			if r := g.do("GET", path+"?ps=1&pg=0", g.admin, nil); len(r.data(t)[0]) != 2 {
				t.Fatalf("read: %s", r.body)
			}
			var dsn string
			switch typ {
			case "pg":
				dsn = dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")
				c, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close(ctx)
				if _, err := c.Exec(ctx, "ALTER TABLE "+name+".t ADD COLUMN b text DEFAULT 'new'"); err != nil {
					t.Fatal(err)
				}
			case "ma":
				c, err := sql.Open("mysql", dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN"))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Exec("ALTER TABLE " + name + ".t ADD COLUMN b text DEFAULT 'new'"); err != nil {
					t.Fatal(err)
				}
			}
			if r := g.do("GET", path+"?ps=1&pg=0", g.admin, nil); len(r.data(t)[0]) != 2 {
				t.Fatalf("the catalog is fresh for 30 s, yet the new column shows: %s", r.body)
			}
			r := g.do("POST", admin+typ+"/"+name+"/reload", g.admin, nil)
			if expect(t, r, 200); fmt.Sprint(r.json(t)["tables"]) != "1" || r.json(t)["warning"] != nil {
				t.Errorf("reload: %s", r.body)
			}
			if r := g.do("GET", path+"?ps=1&pg=0", g.admin, nil); r.data(t)[0]["b"] != "new" {
				t.Errorf("after the reload: %s", r.body)
			}
			for _, op := range []string{"reload", "test"} {
				r := g.do("POST", admin+typ+"/"+empty+"/"+op, g.admin, nil)
				if expect(t, r, 200); fmt.Sprint(r.json(t)["tables"]) != "0" || r.json(t)["warning"] != dialects.NoTablesWarning {
					t.Errorf("%s of an empty schema: %s", op, r.body)
				}
			}
			expect(t, g.do("POST", admin+typ+"/nosuch/reload", g.admin, nil), 404)
		})
	}
}
