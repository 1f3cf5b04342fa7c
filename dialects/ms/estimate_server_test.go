package ms_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/ms"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestEstimateServer runs Estimate on a real SQL Server (MINIMAL_TEST_MS_DSN):
// a table's estimate is its rows from sys.partitions, filter or not (an
// upper bound); a view is counted exactly with the filter; a table that is
// not there is NotFound; and the statement runs for a user holding only
// SELECT on the table, who may not read sys.dm_db_partition_stats.
func TestEstimateServer(t *testing.T) {
	db := newTestDB(t)
	db.create(t, "TABLE", "est", "CREATE TABLE "+db.q("est")+" (id int PRIMARY KEY, k nvarchar(10) NULL)")
	db.exec(t, "INSERT INTO "+db.q("est")+" (id, k) SELECT TOP (50) ROW_NUMBER() OVER (ORDER BY object_id), N'x' FROM sys.all_objects")
	db.create(t, "VIEW", "est_v", "CREATE VIEW "+db.q("est_v")+" AS SELECT id, k FROM "+db.q("est"))
	src := db.open(t, dialects.Config{})
	est, ok := src.(dialects.Estimator)
	if !ok {
		t.Fatal("the ms source is no dialects.Estimator")
	}
	ctx := context.Background()
	read := func(table string, where query.Expr) *query.Plan {
		return &query.Plan{Action: query.Read, Table: table, Where: where, Columns: []string{"id", "k"}}
	}
	for _, c := range []struct {
		name  string
		p     *query.Plan
		want  int64
		wantK fault.Kind
		err   bool
	}{
		{name: "table", p: read("est", nil), want: 50},
		{name: "table, filtered: the table's rows", p: read("est", cond("id", query.Lt, 10)), want: 50},
		{name: "view, filtered: counted", p: read("est_v", cond("id", query.Lt, 10)), want: 9},
		{name: "missing", p: read("est_missing", nil), wantK: fault.NotFound, err: true},
	} {
		got, err := est.Estimate(ctx, c.p)
		if c.err {
			wantKind(t, err, c.wantK)
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}

	// A user with SELECT on the table alone sees its partitions, not the
	// DMV that needs VIEW DATABASE STATE.
	user := "minimal_est_" + strings.TrimPrefix(db.schema, "minimal_test_")
	db.exec(t, "CREATE USER ["+user+"] WITHOUT LOGIN")
	db.drops = append(db.drops, "DROP USER ["+user+"]")
	db.exec(t, "GRANT SELECT ON "+db.q("est")+" TO ["+user+"]")
	conn, err := db.admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("EXECUTE AS USER = N'%s'", user)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := conn.ExecContext(ctx, "REVERT"); err != nil {
			t.Error(err)
		}
	}()
	var typ string
	var n int64
	if err := conn.QueryRowContext(ctx, ms.EstimateSQL, db.schema, "est").Scan(&typ, &n); err != nil || strings.TrimSpace(typ) != "U" || n != 50 {
		t.Errorf("ms.EstimateSQL as a user with SELECT only: %q %d %v", typ, n, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT TOP (1) row_count FROM sys.dm_db_partition_stats").Scan(&n); err == nil {
		t.Errorf("sys.dm_db_partition_stats answered a user without VIEW DATABASE STATE: the test proves nothing")
	}
}
