package ms

import (
	"context"
	"database/sql/driver"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
)

var updateCatalogSQL = flag.Bool("update-catalog-sql", false, "rewrite dialects/ms/testdata/tables.golden.sql")

// TestTablesSQLGolden pins the catalog query Tables sends (no SQL Server
// runs where these tests run): its foreign keys come from sys.foreign_keys
// and sys.foreign_key_columns, single-column ones into the same schema,
// the first by name. Rewrite with -update-catalog-sql after a deliberate
// change, and read the diff.
func TestTablesSQLGolden(t *testing.T) {
	path := filepath.Join("testdata", "tables.golden.sql")
	if *updateCatalogSQL {
		if err := os.WriteFile(path, []byte(tablesSQL[1:]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := tablesSQL[1:] + "\n"; got != string(want) {
		t.Errorf("tablesSQL differs from %s:\n%s", path, got)
	}
}

// TestForeignKeysFromCatalog: the referenced table and column of the
// catalog rows are the column's RefTable and RefColumn ("" for none).
func TestForeignKeysFromCatalog(t *testing.T) {
	row := func(obj int64, table, col string, pk bool, refTable, refCol string) []driver.Value {
		return []driver.Value{obj, table, col, "int", "int", int64(4), int64(10), int64(0), !pk, pk, false, false, false, "", refTable, refCol}
	}
	f := &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		return fakeResult{cols: make([]fakeCol, 16), rows: [][]driver.Value{
			row(3, "orders", "id", true, "", ""),
			row(3, "orders", "customer_id", false, "customers", "id"),
			row(5, "customers", "id", true, "", ""),
		}}
	}}
	tables, err := f.source().Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[1].Name != "orders" {
		t.Fatalf("tables %+v", tables)
	}
	want := []dialects.Column{
		{Name: "id", DBType: "int", Kind: dialects.KindInt, PrimaryKey: true},
		{Name: "customer_id", DBType: "int", Kind: dialects.KindInt, Nullable: true, RefTable: "customers", RefColumn: "id"},
	}
	for i, c := range tables[1].Columns {
		if c != want[i] {
			t.Errorf("column %d:\n got %+v\nwant %+v", i, c, want[i])
		}
	}
}
