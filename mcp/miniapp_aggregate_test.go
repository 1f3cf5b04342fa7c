package mcp_test

import (
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects/mi"
)

// TestMiniAppAggregateInDatabase: query_aggregate's answers now come from
// SQLite (one aggregate read per source through the engine) and are
// combined across sources as SQLite combines a UNION ALL: integer sums
// stay integers, a real makes them real, avg is always real, groups merge
// by key and sort null < numbers < text, a field a source lacks reads as
// null there. Having may test only the group key; the engine refuses a
// sum of text.
func TestMiniAppAggregateInDatabase(t *testing.T) {
	g, sid, dir := aliasFixture(t)
	yaml := "table: mixed\nfields:\n  - name: tag\n    type: string\n  - name: amount\n    type: number\n"
	if err := mi.CreateTable(dir, "mixed", []byte(yaml)); err != nil {
		t.Fatal(err)
	}
	// The catalog sees the new table once its miss refresh allows.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		text, isErr := g.miniTool(sid, "info", map[string]any{"table": "mixed"})
		if !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("table mixed not visible: %s", text)
		}
	}
	for _, r := range []map[string]any{{"tag": "a", "amount": 1.5}, {"tag": "a", "amount": 2}, {"amount": 3}, {"tag": "b"}} {
		if text, isErr := g.miniTool(sid, "create", map[string]any{"table": "mixed", "data": r}); isErr {
			t.Fatalf("create: %s", text)
		}
	}
	multi := func(names ...any) map[string]any { return map[string]any{"kind": "multi", "value": names} }
	single := func(name string) map[string]any { return map[string]any{"kind": "single", "value": name} }
	scalar := func(kind string) map[string]any { return map[string]any{"kind": kind, "field": "amount"} }
	groupBy := func(inner map[string]any) map[string]any {
		a := map[string]any{"kind": "group_by", "by_field": "tag"}
		if inner != nil {
			a["inner"] = inner
		}
		return a
	}
	for _, c := range []struct {
		sources, aggregator map[string]any
		want                string
	}{
		{multi("agg_one", "multi_y"), scalar("sum"), `{"kind":"value","value":21}`},
		{multi("multi_x", "multi_y"), scalar("avg"), `{"kind":"value","value":1.8}`},
		{multi("agg_one", "multi_y"), scalar("min"), `{"kind":"value","value":1}`},
		{multi("multi_x", "agg_one"), scalar("max"), `{"kind":"value","value":6}`},
		{multi("agg_one", "multi_x"), groupBy(scalar("avg")),
			`{"kind":"groups","value":[{"key":"a","count":3,"value":3.6666666666666665},{"key":"b","count":2,"value":3.5}]}`},
		{multi("multi_y", "multi_x"), groupBy(map[string]any{"kind": "count"}),
			`{"kind":"groups","value":[{"key":"a","count":2,"value":2},{"key":"b","count":2,"value":2},{"key":"c","count":1,"value":1}]}`},
		// A real makes the sum real; the mean counts the values only.
		{single("mixed"), scalar("sum"), `{"kind":"value","value":6.5}`},
		{single("mixed"), scalar("avg"), `{"kind":"value","value":2.1666666666666665}`},
		{multi("mixed", "agg_one"), scalar("sum"), `{"kind":"value","value":21.5}`},
		// A missing key is the null group, first; a group without values
		// has a null sum.
		{single("mixed"), groupBy(scalar("sum")),
			`{"kind":"groups","value":[{"key":null,"count":1,"value":3},{"key":"a","count":2,"value":3.5},{"key":"b","count":1,"value":null}]}`},
		// emo has neither tag nor amount: its rows count, in the null group.
		{multi("agg_one", "emo"), scalar("sum"), `{"kind":"value","value":15}`},
		{multi("agg_one", "emo"), map[string]any{"kind": "count"}, `{"kind":"count","value":6}`},
		{multi("agg_one", "emo"), groupBy(scalar("max")),
			`{"kind":"groups","value":[{"key":null,"count":3,"value":null},{"key":"a","count":2,"value":6},{"key":"b","count":1,"value":5}]}`},
		// Having on the key filters groups in every source; a source
		// without the key has none that pass.
		{multi("agg_one", "multi_y", "emo"), map[string]any{"kind": "group_by", "by_field": "tag",
			"having": map[string]any{"type": "in", "field": "tag", "values": []any{"b", "c"}}, "inner": scalar("sum")},
			`{"kind":"groups","value":[{"key":"b","count":2,"value":7},{"key":"c","count":1,"value":3}]}`},
		// Nothing matches: an empty list of groups, a null value, a zero count.
		{single("mixed"), map[string]any{"kind": "group_by", "by_field": "tag", "having": map[string]any{"type": "eq", "field": "tag", "value": "zz"}},
			`{"kind":"groups","value":[]}`},
	} {
		text, isErr := g.miniTool(sid, "query_aggregate", map[string]any{"sources": c.sources, "aggregator": c.aggregator})
		if isErr || text != c.want {
			t.Errorf("query_aggregate %v %v: %v %s, want %s", c.sources, c.aggregator, isErr, text, c.want)
		}
	}
	for _, c := range []struct {
		aggregator map[string]any
		want       string
	}{
		{map[string]any{"kind": "group_by", "by_field": "tag", "having": map[string]any{"type": "eq", "field": "amount", "value": 4}},
			"aggregator error: having may test only the group key 'tag', not 'amount'"},
		{map[string]any{"kind": "sum", "field": "tag"}, `sum needs a numeric column, "tag" is string`},
	} {
		text, isErr := g.miniTool(sid, "query_aggregate", map[string]any{"sources": single("agg_one"), "aggregator": c.aggregator})
		if !isErr || text != c.want {
			t.Errorf("query_aggregate %v: %v %q, want %q", c.aggregator, isErr, text, c.want)
		}
	}
}
