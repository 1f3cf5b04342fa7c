package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/engine"
)

// TestCreateDatabaseNoTablesWarning: registering a database whose schema
// holds no table the gateway can see (an empty schema, a misspelt one)
// succeeds over the admin API, and the 201 answer carries the warning of
// `minimal db add`; a DSN change to it answers it too, and the connection
// test; a schema with a table answers none, and neither does a get or the
// listing. On PostgreSQL and MariaDB.
func TestCreateDatabaseNoTablesWarning(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	dbs := api.AdminPrefix + "/orgs/demo/projects/demo/databases"
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), rand.Uint32())
	empty, full := "minimal_nt_empty_"+suffix, "minimal_nt_full_"+suffix
	dsns := map[string]string{}
	{
		dsn := dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+empty+" CASCADE; DROP SCHEMA IF EXISTS "+full+" CASCADE")
			c.Close(context.Background())
		})
		if _, err := c.Exec(ctx, "CREATE SCHEMA "+empty+"; CREATE SCHEMA "+full+"; CREATE TABLE "+full+".t (id int PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		dsns["pg"] = dsn
	}
	{
		dsn := dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN")
		c, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = c.Exec("DROP DATABASE IF EXISTS " + empty)
			_, _ = c.Exec("DROP DATABASE IF EXISTS " + full)
			c.Close()
		})
		for _, q := range []string{"CREATE DATABASE " + empty, "CREATE DATABASE " + full, "CREATE TABLE " + full + ".t (id int PRIMARY KEY)"} {
			if _, err := c.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		dsns["ma"] = dsn
	}
	for _, typ := range []string{"pg", "ma"} {
		t.Run(typ, func(t *testing.T) {
			dsn := dsns[typ]
			r := g.do("POST", dbs, g.admin, map[string]any{"type": typ, "schema": empty, "dsn": dsn})
			if expect(t, r, 201); r.json(t)["warning"] != dialects.NoTablesWarning || r.json(t)["schema"] != empty {
				t.Errorf("create of an empty schema: %s", r.body)
			}
			r = g.do("PATCH", dbs+"/"+typ+"/"+empty, g.admin, map[string]any{"dsn": dsn})
			if expect(t, r, 200); r.json(t)["warning"] != dialects.NoTablesWarning {
				t.Errorf("DSN change of an empty schema: %s", r.body)
			}
			r = g.do("POST", dbs+"/"+typ+"/"+empty+"/test", g.admin, nil)
			if expect(t, r, 200); r.json(t)["warning"] != dialects.NoTablesWarning {
				t.Errorf("test of an empty schema: %s", r.body)
			}
			if typ == "pg" {
				// A misspelt schema is an empty one to the connection test.
				r = g.do("POST", dbs, g.admin, map[string]any{"type": typ, "schema": "nosuch_" + suffix, "dsn": dsn})
				if expect(t, r, 201); r.json(t)["warning"] != dialects.NoTablesWarning {
					t.Errorf("create of a misspelt schema: %s", r.body)
				}
			}
			r = g.do("POST", dbs, g.admin, map[string]any{"type": typ, "schema": full, "dsn": dsn})
			if expect(t, r, 201); r.json(t)["warning"] != nil || len(r.json(t)) != 5 {
				t.Errorf("create of a schema with a table: %s", r.body)
			}
			r = g.do("PATCH", dbs+"/"+typ+"/"+full, g.admin, map[string]any{"dsn": dsn})
			if expect(t, r, 200); r.json(t)["warning"] != nil {
				t.Errorf("DSN change of a schema with a table: %s", r.body)
			}
			r = g.do("GET", dbs+"/"+typ+"/"+empty, g.admin, nil)
			if expect(t, r, 200); r.json(t)["warning"] != nil {
				t.Errorf("get: %s", r.body)
			}
			r = g.do("GET", dbs, g.admin, nil)
			if expect(t, r, 200); len(r.data(t)) == 0 || r.data(t)[0]["warning"] != nil {
				t.Errorf("listing: %s", r.body)
			}
			// A refused create answers the refusal, not a warning.
			r = g.do("POST", dbs, g.admin, map[string]any{"type": typ, "schema": empty, "dsn": dsn})
			if expect(t, r, 409); r.json(t)["warning"] != nil {
				t.Errorf("duplicate: %s", r.body)
			}
		})
	}
}
