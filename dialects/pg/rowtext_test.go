package pg_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// TestRowTextValues: the cells whose text is their value (text types,
// numeric, a type the package does not know) share one copy of their
// row's text; each row's values stay as read while later rows are read,
// with empty strings, NULLs, NaN and infinities among them.
func TestRowTextValues(t *testing.T) {
	db := newTestDB(t)
	db.exec(t, `CREATE TYPE `+db.schema+`.mood AS ENUM ('ok', 'sad')`)
	db.exec(t, `CREATE TABLE `+db.schema+`.cells (id int8 PRIMARY KEY, t text, v varchar(20), n numeric, m `+db.schema+`.mood, c char(3))`)
	db.exec(t, `INSERT INTO `+db.schema+`.cells VALUES
		(1, 'first é', 'vc', 1.50, 'ok', 'ab'),
		(2, '', NULL, 'NaN', 'sad', NULL),
		(3, NULL, '', '-Infinity', NULL, 'xyz'),
		(4, repeat('long ', 100), 'last', 12345678901234567890.123456789012, 'ok', '')`)
	src := db.open(t, dialects.Config{})
	rows, err := src.Read(context.Background(), &query.Plan{Action: query.Read, Schema: db.schema, Table: "cells",
		Columns: []string{"id", "t", "v", "n", "m", "c"}, Order: []query.Order{{Column: "id"}}})
	got := collect(t, rows, err)
	long := ""
	for range 100 {
		long += "long "
	}
	want := [][]any{
		{int64(1), "first é", "vc", json.Number("1.50"), "ok", "ab "},
		{int64(2), "", nil, "NaN", "sad", nil},
		{int64(3), nil, "", "-Infinity", nil, "xyz"},
		{int64(4), long, "last", json.Number("12345678901234567890.123456789012"), "ok", "   "},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n%#v\nwant\n%#v", got, want)
	}
}
