package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/littlebitlabs/minimal/query"
)

// aggFile writes a table file laid out as mini-app-mcp's, holding the
// documents in the given order (so in that rowid order).
func aggFile(t *testing.T, docs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE rows (id TEXT PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		// Ids run backwards, so id order is not rowid order.
		if _, err := db.Exec(`INSERT INTO rows VALUES (?, ?, 0, 0)`, string(rune('z'-i)), d); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// upstreamAnswer runs mini-app-mcp's own statement text (fields written
// into the paths, numbers bound as reals) over the files attached as
// db_0, db_1, …: what mini-app-mcp answers on these files.
func upstreamAnswer(t *testing.T, files []string, stmt string, args ...any) [][]any {
	t.Helper()
	out, err := runFileAggregate(context.Background(), files, stmt, args)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return out
}

func TestAggregateFilesAsMiniApp(t *testing.T) {
	ctx := context.Background()
	a := aggFile(t,
		`{"tag":"a","amount":1,"labels":["x"]}`,
		`{"tag":"a","amount":2,"labels":["y"]}`,
		`{"tag":"b","amount":5,"labels":["x"]}`,
		`{"tag":"b","amount":"7","labels":[]}`,
	)
	b := aggFile(t,
		`{"tag":"a","amount":10.5,"labels":["x"]}`,
		`{"tag":"c","amount":3}`,
	)
	eq := func(f string, v any) *query.Cond { return &query.Cond{Column: f, Op: query.Eq, Args: []any{v}} }
	has := func(f string, v any) *query.Cond {
		return &query.Cond{Column: f, Op: query.ArrayContains, Args: []any{v}}
	}
	hasNot := func(f string, v any) *query.Cond {
		return &query.Cond{Column: f, Op: query.ArrayNotContains, Args: []any{v}}
	}
	one := `SELECT id, data, created_at, updated_at FROM db_0.rows`
	two := one + ` UNION ALL SELECT id, data, created_at, updated_at FROM db_1.rows`
	cases := []struct {
		name     string
		agg      fileAggregate
		want     [][]any
		upstream string
		args     []any
	}{{
		// SQLite reads the bare data of a group from its first row in
		// scan order (files in order, each by rowid): amount 1 for a, 5
		// for b. So having amount = 2 keeps no group, amount = 1 keeps a.
		name: "having on a non-group field tests the group's first row",
		agg: fileAggregate{Files: []string{a}, GroupBy: "tag", Func: query.AggSum, Field: "amount",
			Having: query.Or{eq("amount", 2.0), eq("amount", 1.0)}},
		want: [][]any{{"a", int64(2), int64(3)}},
		upstream: `SELECT json_extract(data, '$.tag') AS group_key, COUNT(*), SUM(json_extract(data, '$.amount')) FROM (` + one +
			`) GROUP BY group_key HAVING (json_extract(data, '$.amount') = ? OR json_extract(data, '$.amount') = ?)`,
		args: []any{2.0, 1.0},
	}, {
		// With one max aggregate, the bare row is the one holding the
		// greatest value: amount 2 in a, "7" (text sorts after numbers)
		// in b, where the first rows hold 1 and 5.
		name: "having with max tests the row holding the greatest value",
		agg: fileAggregate{Files: []string{a}, GroupBy: "tag", Func: query.AggMax, Field: "amount",
			Having: query.Or{eq("amount", 2.0), eq("amount", "7")}},
		want: [][]any{{"a", int64(2), int64(2)}, {"b", int64(2), "7"}},
		upstream: `SELECT json_extract(data, '$.tag') AS group_key, COUNT(*), MAX(json_extract(data, '$.amount')) FROM (` + one +
			`) GROUP BY group_key HAVING (json_extract(data, '$.amount') = ? OR json_extract(data, '$.amount') = ?)`,
		args: []any{2.0, "7"},
	}, {
		// Over two files the chain is a's rows then b's: the first row of
		// group a and of group b has labels ["x"]; c has no labels.
		name: "array_contains in having over several sources",
		agg:  fileAggregate{Files: []string{a, b}, GroupBy: "tag", Having: has("labels", "x")},
		want: [][]any{{"a", int64(3), int64(3)}, {"b", int64(2), int64(2)}},
		upstream: `SELECT json_extract(data, '$.tag') AS group_key, COUNT(*), COUNT(*) FROM (` + two +
			`) GROUP BY group_key HAVING EXISTS (SELECT 1 FROM json_each(json_extract(data, '$.labels')) WHERE value = ?)`,
		args: []any{"x"},
	}, {
		// c's row has no labels: json_each yields nothing, so it passes.
		name: "array_not_contains in having",
		agg:  fileAggregate{Files: []string{a, b}, GroupBy: "tag", Having: hasNot("labels", "x")},
		want: [][]any{{"c", int64(1), int64(1)}},
		upstream: `SELECT json_extract(data, '$.tag') AS group_key, COUNT(*), COUNT(*) FROM (` + two +
			`) GROUP BY group_key HAVING NOT EXISTS (SELECT 1 FROM json_each(json_extract(data, '$.labels')) WHERE value = ?)`,
		args: []any{"x"},
	}, {
		name:     "sum over a string field counts it as 0",
		agg:      fileAggregate{Files: []string{a}, Func: query.AggSum, Field: "tag"},
		want:     [][]any{{0.0}},
		upstream: `SELECT SUM(json_extract(data, '$.tag')) FROM (` + one + `)`,
	}, {
		// "7" is text that reads as the integer 7: the sum stays an
		// integer.
		name:     "sum over a number field holding text",
		agg:      fileAggregate{Files: []string{a}, Func: query.AggSum, Field: "amount"},
		want:     [][]any{{int64(15)}},
		upstream: `SELECT SUM(json_extract(data, '$.amount')) FROM (` + one + `)`,
	}, {
		name:     "avg over a string field",
		agg:      fileAggregate{Files: []string{a, b}, Func: query.AggAvg, Field: "tag"},
		want:     [][]any{{0.0}},
		upstream: `SELECT AVG(json_extract(data, '$.tag')) FROM (` + two + `)`,
	}, {
		name:     "max over a number field holding text is the text",
		agg:      fileAggregate{Files: []string{a, b}, Func: query.AggMax, Field: "amount"},
		want:     [][]any{{"7"}},
		upstream: `SELECT MAX(json_extract(data, '$.amount')) FROM (` + two + `)`,
	}, {
		name:     "min over an array field compares its JSON text",
		agg:      fileAggregate{Files: []string{a}, Func: query.AggMin, Field: "labels"},
		want:     [][]any{{"[\"x\"]"}},
		upstream: `SELECT MIN(json_extract(data, '$.labels')) FROM (` + one + `)`,
	}, {
		name: "filter and like as mini-app-mcp writes them",
		agg: fileAggregate{Files: []string{a, b}, Func: query.AggCount,
			Where: query.And{&query.Cond{Column: "tag", Op: query.ILike, Args: []any{"A"}}, &query.Cond{Column: "amount", Op: query.In, Args: []any{json.Number("1"), int64(10)}}}},
		want: [][]any{{int64(1)}},
		upstream: `SELECT COUNT(*) FROM (SELECT id, data, created_at, updated_at FROM db_0.rows WHERE (json_extract(data, '$.tag') LIKE ? AND json_extract(data, '$.amount') IN (?, ?))` +
			` UNION ALL SELECT id, data, created_at, updated_at FROM db_1.rows WHERE (json_extract(data, '$.tag') LIKE ? AND json_extract(data, '$.amount') IN (?, ?)))`,
		args: []any{"A", 1.0, 10.0, "A", 1.0, 10.0},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := aggregateFiles(ctx, c.agg)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
			up := upstreamAnswer(t, c.agg.Files, c.upstream, c.args...)
			if !reflect.DeepEqual(got, up) {
				t.Fatalf("got %#v, mini-app-mcp's statement answers %#v", got, up)
			}
		})
	}
}

func TestAggregateFilesRefusals(t *testing.T) {
	ctx := context.Background()
	f := aggFile(t, `{"tag":"a"}`)
	for name, a := range map[string]fileAggregate{
		"no file":           {Func: query.AggCount},
		"having ungrouped":  {Files: []string{f}, Func: query.AggCount, Having: &query.Cond{Column: "tag", Op: query.Eq, Args: []any{"a"}}},
		"sum without field": {Files: []string{f}, Func: query.AggSum},
		"not a ListFilter":  {Files: []string{f}, Func: query.AggCount, Where: &query.Cond{Column: "tag", Op: query.Gt, Args: []any{"a"}}},
		"object value":      {Files: []string{f}, Func: query.AggCount, Where: &query.Cond{Column: "tag", Op: query.Eq, Args: []any{map[string]any{}}}},
	} {
		if _, err := aggregateFiles(ctx, a); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
