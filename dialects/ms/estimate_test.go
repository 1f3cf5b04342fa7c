package ms

import (
	"context"
	"database/sql/driver"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// EstimateSQL is estimateSQL for the server tests of package ms_test.
const EstimateSQL = estimateSQL

var updateEstimateSQL = flag.Bool("update-estimate-sql", false, "rewrite dialects/ms/testdata/estimate.golden.sql")

// TestEstimateSQLGolden pins the statement count=planned|estimated sends
// (no SQL Server runs where these tests run): the table found in the
// catalog by schema and name bound as @p1 and @p2, its rows summed from
// sys.partitions (index_id 0 or 1), nothing of the request in the text.
// Rewrite with -update-estimate-sql after a deliberate change, and read
// the diff.
func TestEstimateSQLGolden(t *testing.T) {
	path := filepath.Join("testdata", "estimate.golden.sql")
	got := estimateSQL + "\n"
	if *updateEstimateSQL {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("estimateSQL differs from %s:\n%s", path, got)
	}
	for _, banned := range []string{"dm_db_partition_stats", "OBJECT_ID(", "'+", "+'"} {
		if strings.Contains(estimateSQL, banned) {
			t.Errorf("estimateSQL uses %q", banned)
		}
	}
}

// TestEstimateAnswers: Estimate binds the source's schema and the table as
// @p1 and @p2; a table answers its partitions' rows, a view is counted
// with the read's filter, an object the catalog does not show is NotFound.
func TestEstimateAnswers(t *testing.T) {
	var objType string
	f := &fakeDB{script: func(q string, args []driver.NamedValue) fakeResult {
		if q == estimateSQL {
			if len(args) != 2 || args[0].Value != "app" {
				t.Errorf("estimate args %v, want the schema and the table", args)
			}
			if args[1].Value == "missing" {
				return fakeResult{cols: []fakeCol{{"type", "CHAR", false}, {"n", "BIGINT", true}}}
			}
			var n driver.Value = int64(1234)
			if objType == "V " {
				n = nil
			}
			return fakeResult{cols: []fakeCol{{"type", "CHAR", false}, {"n", "BIGINT", true}}, rows: [][]driver.Value{{objType, n}}}
		}
		if !strings.HasPrefix(q, "SELECT count(*) AS [n] FROM [app].[v]") && !strings.HasPrefix(q, "SELECT count(*) AS [n] FROM [app].[t] WHERE [id] < @p1") {
			t.Errorf("unexpected statement %s", q)
		}
		return fakeResult{cols: []fakeCol{{"n", "INT", false}}, rows: [][]driver.Value{{int64(7)}}}
	}}
	src := f.source()
	src.schema = "app"
	ctx := context.Background()
	read := func(table string) *query.Plan {
		return &query.Plan{Action: query.Read, Table: table, Columns: []string{"id"},
			Where: &query.Cond{Column: "id", Op: query.Lt, Args: []any{int64(9)}}}
	}
	whole := func(table string) *query.Plan {
		return &query.Plan{Action: query.Read, Table: table, Columns: []string{"id"}}
	}
	objType = "U "
	if n, err := src.Estimate(ctx, whole("t")); err != nil || n != 1234 {
		t.Errorf("table: %d, %v; want 1234 from sys.partitions", n, err)
	}
	// A filter (or a row scope, which the engine ANDs into Where) is
	// counted exactly: the table's total would tell of rows outside it.
	if n, err := src.Estimate(ctx, read("t")); err != nil || n != 7 {
		t.Errorf("filtered table: %d, %v; want the exact count 7", n, err)
	}
	objType = "V "
	if n, err := src.Estimate(ctx, whole("v")); err != nil || n != 7 {
		t.Errorf("view: %d, %v; want the exact count 7", n, err)
	}
	if _, err := src.Estimate(ctx, whole("missing")); fault.KindOf(err) != fault.NotFound {
		t.Errorf("missing table: %v, want NotFound", err)
	}
	if _, err := src.Estimate(ctx, &query.Plan{Action: query.Delete, Table: "t"}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("a delete plan: %v, want Invalid", err)
	}
}
