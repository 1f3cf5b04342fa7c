package pg_test

import (
	"context"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// TestShapeKept: reads of one statement share the columns made for its
// first result (no columns and decoders made per query), and a table
// whose column changed type answers with its new columns and values, not
// the kept ones.
func TestShapeKept(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, "CREATE TABLE "+db.schema+".shapes (id int PRIMARY KEY, v int)")
	db.exec(t, "INSERT INTO "+db.schema+".shapes VALUES (1, 10), (2, 20)")
	src := db.open(t, dialects.Config{})
	read := func() ([]dialects.Column, [][]any, error) {
		p := &query.Plan{Action: query.Read, Table: "shapes", Columns: []string{"id", "v"}, Limit: 10,
			Order: []query.Order{{Column: "id"}}}
		rows, err := src.Read(context.Background(), p)
		if err != nil {
			return nil, nil, err
		}
		cols := rows.Columns()
		return cols, collect(t, rows, nil), nil
	}
	a, _, err := read()
	if err != nil {
		t.Fatal(err)
	}
	b, vals, err := read()
	if err != nil {
		t.Fatal(err)
	}
	if &a[0] != &b[0] {
		t.Error("two reads of one statement made their columns twice")
	}
	if b[1].Kind != dialects.KindInt || vals[1][1] != int64(20) {
		t.Fatalf("before the change: %+v %v", b[1], vals)
	}

	db.exec(t, "ALTER TABLE "+db.schema+".shapes ALTER COLUMN v TYPE text USING 'x' || v")
	// The connection's prepared statement no longer fits the table: the
	// first read may answer ErrSchemaChanged (engine reads again once).
	c, vals, err := read()
	if err != nil {
		c, vals, err = read()
	}
	if err != nil {
		t.Fatal(err)
	}
	if c[1].Kind != dialects.KindString || c[1].DBType != "text" || vals[1][1] != "x20" {
		t.Fatalf("after the change: %+v %v", c[1], vals)
	}
}
