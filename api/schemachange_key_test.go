package api_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/engine"
)

// TestLiveSchemaChangeByKey: a read by key that meets a dropped column is
// run again from its filter as given (the first run coerced the key in
// place), and answers 200 with the row, not a 400 about the key.
func TestLiveSchemaChangeByKey(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("lsck", map[string][]string{"pg": {`CREATE TABLE {db}.t (id bigint PRIMARY KEY, a text, b text)`}})
	path := auto + "/pg/" + name + "/t"
	g.waitFor("/pg/" + name + "/t?ps=1&pg=0")
	expect(t, g.do("POST", path, g.admin, map[string]any{"id": 7, "a": "x", "b": "y"}), 201)
	expect(t, g.do("GET", path+"?ps=1&pg=0&id=eq.7", g.admin, nil), 200) // the catalog knows b
	c, err := pgx.Connect(ctx, dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "ALTER TABLE "+name+".t DROP COLUMN b"); err != nil {
		t.Fatal(err)
	}
	r := g.do("GET", path+"?ps=1&pg=0&id=eq.7", g.admin, nil)
	expect(t, r, 200)
	if rows := r.data(t); len(rows) != 1 || rows[0]["a"] != "x" || len(rows[0]) != 2 {
		t.Errorf("read by key after a dropped column: %s", r.body)
	}
}
