package mi_test

import (
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/mi"
)

// confSchemas are the conformance fixtures (see the dialecttest package
// documentation) as mini-app schema.yaml files. Fields can only be string,
// number, boolean, array or object, so several columns are absent; the
// Lacks below say why.
var confSchemas = map[string]string{
	dialecttest.TableItems: `table: conf_items
fields:
  - name: name
    type: string
    required: true
  - name: qty
    type: number
  - name: ratio
    type: number
  - name: active
    type: boolean
  - name: note
    type: string
`,
	dialecttest.TableWrites: `table: conf_writes
fields:
  - name: name
    type: string
    required: true
  - name: qty
    type: number
`,
	dialecttest.TableTypes: `table: conf_types
fields:
  - name: name
    type: string
    required: true
  - name: f64
    type: number
  - name: b
    type: boolean
  - name: s
    type: string
  - name: j
    type: object
  - name: arr
    type: array
`,
}

// TestConformance runs the shared dialect suite on a fresh scope directory.
// mi needs no server, so it always runs.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	for name, yaml := range confSchemas {
		if err := mi.CreateTable(dir, name, []byte(yaml)); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	noTime := "schema.yaml has no date or time field type; dates and times are plain strings"
	dialecttest.RunConformance(t, dialecttest.Harness{
		Type:      "mi",
		Config:    dialects.Config{DSN: dir, Schema: "conf"},
		NullOrder: dialecttest.NullsSmallest, // SQLite
		// Each row is its own INSERT, all in one SQLite transaction.
		MaxInsertValues: 0,
		Lacks: dialecttest.Lacks{
			Integers:    "a schema.yaml number is one JSON number type, served as a float column; ids are UUID text",
			Decimal:     "a schema.yaml number is a JSON number, which mini-app-mcp holds as an f64: no exact decimal(20,6)",
			Date:        noTime,
			Timestamp:   noTime,
			TimestampTZ: noTime,
			UUID:        "schema.yaml has no uuid field type (only the generated id is a UUID, as text)",
			Bytes:       "row data is JSON text; schema.yaml has no binary field type",
			Defaults:    "schema.yaml fields have no defaults; only id, created_at and updated_at are filled by the store",
			Unique:      "schema.yaml has no unique constraints; the generated id is the only key",
			Timeout:     "a table is a local SQLite file: no read can be made to take seconds without writing a large file; a lapsed context is tested instead",
			Outage:      "there is no server to lose: tables are files in a local directory",
			Upsert:      "schema.yaml has no unique constraints: a row is keyed by the id the store assigns, so no duplicate can be found",
			ReturnUpdate: "mini-app's row store (its rows and history tables, written as mini-app-mcp writes them) " +
				"answers an update with the count of rows changed, not the rows",
			ReturnDelete: "mini-app's row store answers a delete (which keeps the row in its history) with the count of rows deleted, not the rows",
			Estimate:     "a mini-app table is a local SQLite file without planner statistics: counting is exact and cheap",
		},
	})
}
