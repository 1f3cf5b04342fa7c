package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/store"
)

// dialectDBs makes a fresh database of its own on each type that ddl names
// (pg: a schema, ma and ch: a database; all called minimal_<prefix>_…),
// runs the type's statements in it ({db} stands for its name), registers
// it in the gateway's project and drops it when the test ends. It returns
// the name, which is the schema of every registration.
func (g *gateway) dialectDBs(prefix string, ddl map[string][]string) string {
	g.t.Helper()
	return g.dialectDBsVia(prefix, ddl, nil)
}

// dialectDBsVia is dialectDBs registering each database with the DSN that
// via returns for its type and test DSN (a route through a proxy); nil
// registers the test DSN.
func (g *gateway) dialectDBsVia(prefix string, ddl map[string][]string, via func(typ, dsn string) string) string {
	t := g.t
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("minimal_%s_%d_%d", prefix, os.Getpid(), rand.Uint32())
	fill := func(q string) string { return strings.ReplaceAll(q, "{db}", name) }
	for typ, stmts := range ddl {
		var dsn string
		switch typ {
		case "pg":
			dsn = dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")
			pc, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_, _ = pc.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
				pc.Close(context.Background())
			})
			for _, q := range append([]string{"CREATE SCHEMA {db}"}, stmts...) {
				if _, err := pc.Exec(ctx, fill(q)); err != nil {
					t.Fatal(err)
				}
			}
		case "ma":
			dsn = dialecttest.DSN(t, "MINIMAL_TEST_MA_DSN")
			mc, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = mc.Exec("DROP DATABASE IF EXISTS " + name); mc.Close() })
			for _, q := range append([]string{"CREATE DATABASE {db}"}, stmts...) {
				if _, err := mc.Exec(fill(q)); err != nil {
					t.Fatal(err)
				}
			}
		case "ch":
			dsn = dialecttest.DSN(t, "MINIMAL_TEST_CH_DSN")
			opts, err := clickhouse.ParseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			cc, err := clickhouse.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cc.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name); cc.Close() })
			for _, q := range append([]string{"CREATE DATABASE {db}"}, stmts...) {
				if err := cc.Exec(ctx, fill(q)); err != nil {
					t.Fatal(err)
				}
			}
		default:
			t.Fatalf("dialectDBs: no setup for type %q", typ)
		}
		if via != nil {
			dsn = via(typ, dsn)
		}
		if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: typ, Schema: name, DSN: dsn}); err != nil {
			t.Fatal(err)
		}
	}
	return name
}
