package ms

import (
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// TestRenderChecks pins the statement of CheckValues: every value cast to
// its column's declared type in a derived table named after the columns,
// the scope rendered as a WHERE on it, tests joined by UNION ALL.
func TestRenderChecks(t *testing.T) {
	tbl := &dialects.Table{Name: "ledger", Columns: []dialects.Column{
		{Name: "dept_code", DBType: "nvarchar(20)", Kind: dialects.KindString},
		{Name: "amount", DBType: "decimal(6,2)", Kind: dialects.KindDecimal},
	}}
	scope := query.Or{&query.Cond{Column: "dept_code", Op: query.Eq, Args: []any{"6"}}, &query.Cond{Column: "amount", Op: query.Lt, Args: []any{int64(1000)}}}
	st, err := renderChecks(tbl, []dialects.ValueTest{
		{Columns: []string{"dept_code", "amount"}, Row: []any{"06", "999.999"}, Expr: scope},
		{Columns: []string{"amount"}, Row: []any{nil}, Expr: scope[1]},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT 0 FROM (SELECT CAST(@p1 AS nvarchar(20)) AS [dept_code], CAST(@p2 AS decimal(6,2)) AS [amount]) AS [v] WHERE [dept_code] = @p3 OR [amount] < @p4" +
		" UNION ALL SELECT 1 FROM (SELECT CAST(NULL AS decimal(6,2)) AS [amount]) AS [v] WHERE [amount] < @p5"
	if st.SQL != want {
		t.Fatalf("got  %s\nwant %s", st.SQL, want)
	}
	if len(st.Args) != 5 || st.Args[0] != "06" || st.Args[1] != "999.999" {
		t.Fatalf("args %v", st.Args)
	}
	if _, err := renderChecks(tbl, []dialects.ValueTest{{Columns: []string{"nope"}, Row: []any{1}, Expr: scope}}); err == nil {
		t.Fatal("a column the table lacks was rendered")
	}
}
