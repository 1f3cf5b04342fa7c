package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/store"
)

// aliasFixture is the bootstrap gateway with the mi tables of the
// contract's scenarios in the bootstrap's mi database "app": emo{text,
// tags} with 3 rows, agg_one{tag, amount} with 3, multi_x with 2 and
// multi_y with 3.
func aliasFixture(t *testing.T) (*gateway, string, string) {
	g := newGateway(t, time.Hour)
	dir := filepath.Join(g.dir, "mini-app", "app")
	emo := "table: emo\nfields:\n  - name: text\n    type: string\n    required: true\n  - name: tags\n    type: array\n"
	agg := func(name string) string {
		return "table: " + name + "\nfields:\n  - name: tag\n    type: string\n    required: true\n  - name: amount\n    type: number\n"
	}
	for name, yaml := range map[string]string{"emo": emo, "agg_one": agg("agg_one"), "multi_x": agg("multi_x"), "multi_y": agg("multi_y")} {
		if err := mi.CreateTable(dir, name, []byte(yaml)); err != nil {
			t.Fatal(err)
		}
	}
	sid := g.start(g.agent)
	rows := map[string][]map[string]any{
		"emo":     {{"text": "hello", "tags": []any{"x"}}, {"text": "world", "tags": []any{"y"}}, {"text": "again", "tags": []any{"x", "y"}}},
		"agg_one": {{"tag": "a", "amount": 4}, {"tag": "a", "amount": 6}, {"tag": "b", "amount": 5}},
		"multi_x": {{"tag": "a", "amount": 1}, {"tag": "b", "amount": 2}},
		"multi_y": {{"tag": "a", "amount": 1}, {"tag": "b", "amount": 2}, {"tag": "c", "amount": 3}},
	}
	for table, rs := range rows {
		for _, r := range rs {
			if text, isErr := g.miniTool(sid, "create", map[string]any{"table": table, "data": r}); isErr {
				t.Fatalf("create %s: %s", table, text)
			}
		}
	}
	return g, sid, dir
}

// TestMiniAppAliasScenarios replays the contract's scenarios 5–9 and
// 14–19 (aliases) over HTTP.
func TestMiniAppAliasScenarios(t *testing.T) {
	g, sid, dir := aliasFixture(t)
	call := func(name string, args map[string]any) (string, bool) { return g.miniTool(sid, name, args) }
	ok := func(name string, args map[string]any) string {
		t.Helper()
		text, isErr := call(name, args)
		if isErr {
			t.Fatalf("%s %v: %s", name, args, text)
		}
		return text
	}
	fails := func(name string, args map[string]any, want string) {
		t.Helper()
		text, isErr := call(name, args)
		if !isErr || text != want {
			t.Fatalf("%s %v: isError %v %q, want %q", name, args, isErr, text, want)
		}
	}
	rowsOf := func(text string) []struct {
		ID   string         `json:"id"`
		Data map[string]any `json:"data"`
	} {
		t.Helper()
		var rs []struct {
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(text), &rs); err != nil {
			t.Fatalf("not rows: %s", text)
		}
		return rs
	}
	like := map[string]any{"type": "like", "field": "text", "pattern": "%"}

	// 5: create, list, run, delete; run after delete is ALIAS_NOT_FOUND.
	if got := ok("alias_create", map[string]any{"name": "all_emo", "table": "emo", "filter": like, "description": "every emo"}); got != `{"created":"all_emo"}` {
		t.Fatalf("alias_create: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "_global.db")); err != nil {
		t.Fatalf("alias store: %v", err)
	}
	want := `[{"name":"all_emo","sources":{"kind":"single","value":"emo"},"aggregator":null,"filter":"{\"field\":\"text\",\"pattern\":\"%\",\"type\":\"like\"}","default_limit":null,"description":"every emo","params_schema":null,"fields":null,"order_by":null,"scope":"project"}]`
	if got := ok("alias_list", map[string]any{}); got != want {
		t.Fatalf("alias_list:\n got %s\nwant %s", got, want)
	}
	if got := ok("alias_list", map[string]any{"table": "agg_one"}); got != `[]` {
		t.Fatalf("alias_list table agg_one: %s", got)
	}
	if rs := rowsOf(ok("alias_run", map[string]any{"name": "all_emo"})); len(rs) != 3 {
		t.Fatalf("alias_run: %v", rs)
	}
	// 6: a duplicate name.
	fails("alias_create", map[string]any{"name": "all_emo", "table": "emo", "filter": like}, "alias already exists: all_emo")
	if got := ok("alias_delete", map[string]any{"name": "all_emo"}); got != `{"deleted":"all_emo"}` {
		t.Fatalf("alias_delete: %s", got)
	}
	fails("alias_run", map[string]any{"name": "all_emo"}, "alias not found: all_emo")
	fails("alias_delete", map[string]any{"name": "all_emo"}, "alias not found: all_emo")

	// 7: stored limit 1; runtime limit 3; limit 3 offset 2.
	ok("alias_create", map[string]any{"name": "one_emo", "table": "emo", "filter": like, "limit": 1})
	for _, c := range []struct {
		args map[string]any
		n    int
	}{{map[string]any{}, 1}, {map[string]any{"limit": 3}, 3}, {map[string]any{"limit": 3, "offset": 2}, 1}} {
		c.args["name"] = "one_emo"
		if rs := rowsOf(ok("alias_run", c.args)); len(rs) != c.n {
			t.Fatalf("alias_run %v: %d rows, want %d", c.args, len(rs), c.n)
		}
	}

	// 8: a templated alias: params_schema listed, run with params.
	ok("alias_create", map[string]any{"name": "by_text", "table": "emo",
		"filter_template": `{"type":"eq","field":"text","value":"{{ t }}"}`, "params_schema": []any{"t"}})
	var listed []map[string]any
	if err := json.Unmarshal([]byte(ok("alias_list", map[string]any{"table": "emo"})), &listed); err != nil || len(listed) != 2 || listed[0]["name"] != "by_text" {
		t.Fatalf("alias_list: %v", listed)
	}
	if listed[0]["params_schema"] != `["t"]` || listed[0]["filter"] != `{"type":"eq","field":"text","value":"{{ t }}"}` {
		t.Fatalf("templated alias listed as %v", listed[0])
	}
	rs := rowsOf(ok("alias_run", map[string]any{"name": "by_text", "params": map[string]any{"t": "world"}}))
	if len(rs) != 1 || rs[0].Data["text"] != "world" {
		t.Fatalf("templated run: %v", rs)
	}
	// A JSON-encoded params string is accepted; tojson renders JSON.
	ok("alias_create", map[string]any{"name": "by_text_json", "table": "emo",
		"filter_template": `{"type":"in","field":"text","values":[{{ a | tojson }},{{ b|tojson }}]}`, "params_schema": []any{"a", "b"}})
	if rs := rowsOf(ok("alias_run", map[string]any{"name": "by_text_json", "params": `{"a":"hello","b":"again"}`})); len(rs) != 2 {
		t.Fatalf("tojson run: %v", rs)
	}
	// An undefined variable renders empty: no row has text "".
	if rs := rowsOf(ok("alias_run", map[string]any{"name": "by_text", "params": map[string]any{"other": 1}})); len(rs) != 0 {
		t.Fatalf("undefined param: %v", rs)
	}
	// 9: without params.
	fails("alias_run", map[string]any{"name": "by_text"}, "alias 'by_text' requires params but none were provided")

	// 14: multi sources + count, no table.
	ok("alias_create", map[string]any{"name": "multi_count", "sources": map[string]any{"kind": "multi", "value": []any{"multi_x", "multi_y"}},
		"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "in", "field": "tag", "values": []any{"a", "b", "c"}}})
	if got := ok("alias_run", map[string]any{"name": "multi_count"}); got != `{"kind":"count","value":5}` {
		t.Fatalf("multi alias run: %s", got)
	}
	if got := ok("alias_list", map[string]any{"table": "multi_y"}); !strings.Contains(got, `"name":"multi_count","sources":{"kind":"multi","value":["multi_x","multi_y"]},"aggregator":{"kind":"count"}`) {
		t.Fatalf("alias_list multi_y: %s", got)
	}
	// Multi without an aggregator cannot run.
	ok("alias_create", map[string]any{"name": "multi_rows", "sources": map[string]any{"kind": "multi", "value": []any{"multi_x", "multi_y"}},
		"filter": map[string]any{"type": "eq", "field": "tag", "value": "a"}})
	fails("alias_run", map[string]any{"name": "multi_rows"}, "aggregator error: Multi/Pattern source aliases require an aggregator (Phase 2 limitation)")

	// 15: a pattern source resolved at run time.
	ok("alias_create", map[string]any{"name": "agg_count", "sources": map[string]any{"kind": "pattern", "value": "agg*"},
		"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "x"}})
	// The stored filter matches nothing: a filterless pattern count instead.
	ok("alias_create", map[string]any{"name": "agg_all", "sources": map[string]any{"kind": "pattern", "value": "agg*"},
		"aggregator": map[string]any{"kind": "count"}, "filter_template": `{"type":"like","field":"tag","pattern":"%"}`})
	if got := ok("alias_run", map[string]any{"name": "agg_count"}); got != `{"kind":"count","value":0}` {
		t.Fatalf("pattern count with filter: %s", got)
	}
	if got := ok("alias_run", map[string]any{"name": "agg_all"}); got != `{"kind":"count","value":3}` {
		t.Fatalf("pattern count: %s", got)
	}
	// 16: a pattern matching nothing.
	ok("alias_create", map[string]any{"name": "none_count", "sources": map[string]any{"kind": "pattern", "value": "zzz*"},
		"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "x"}})
	fails("alias_run", map[string]any{"name": "none_count"}, "aggregator error: SourceSpec::Pattern('zzz*') matched zero tables")

	// 17: sources and table together; filter rules.
	fails("alias_create", map[string]any{"name": "both", "table": "emo", "sources": map[string]any{"kind": "single", "value": "emo"}, "filter": like},
		"`sources` and `table` are mutually exclusive (provide one only)")
	fails("alias_create", map[string]any{"name": "both", "table": "emo", "filter": like, "filter_template": "{}"}, "filter and filter_template are mutually exclusive")
	fails("alias_create", map[string]any{"name": "neither", "table": "emo"}, "either filter or filter_template is required")
	fails("alias_create", map[string]any{"name": "nt", "filter": like}, "table argument is required in multi-table mode")
	fails("alias_create", map[string]any{"name": "bad", "table": "emo", "filter": map[string]any{"type": "eq", "field": "nope", "value": "x"}},
		"validation error on field 'nope': unknown field 'nope' — only schema-registered fields are allowed in filter")
	fails("alias_create", map[string]any{"name": "usr", "table": "emo", "filter": like, "scope": "user"},
		"alias_create: requested scope User is not mounted on this server. Either omit the `scope` argument (the server will auto-select a mounted scope) or configure the corresponding directory (MINI_APP_PROJECT_DIR / MINI_APP_USER_DIR).")

	// 18: stored fields apply when run without fields; runtime fields win.
	ok("alias_create", map[string]any{"name": "texts", "table": "emo", "filter": like,
		"fields": map[string]any{"mode": "list", "fields": []any{"text"}}, "order_by": []any{map[string]any{"field": "text", "direction": "asc"}}})
	rs = rowsOf(ok("alias_run", map[string]any{"name": "texts"}))
	if len(rs) != 3 || rs[0].Data["text"] != "again" || len(rs[0].Data) != 1 || rs[0].ID == "" {
		t.Fatalf("stored fields: %v", rs)
	}
	if _, has := rs[0].Data["tags"]; has {
		t.Fatalf("stored fields kept tags: %v", rs)
	}
	rs = rowsOf(ok("alias_run", map[string]any{"name": "texts", "fields": map[string]any{"mode": "all"}, "order_by": []any{map[string]any{"field": "text", "direction": "desc"}}}))
	if len(rs) != 3 || rs[0].Data["text"] != "world" || len(rs[0].Data["tags"].([]any)) != 1 {
		t.Fatalf("runtime fields/order: %v", rs)
	}
	// 19: no stored fields: full data and id.
	rs = rowsOf(ok("alias_run", map[string]any{"name": "one_emo", "limit": 3}))
	for _, r := range rs {
		if len(r.ID) != 36 || r.Data["text"] == nil || r.Data["tags"] == nil {
			t.Fatalf("full rows: %v", rs)
		}
	}
	// alias_list is sorted by name.
	var names []string
	if err := json.Unmarshal([]byte(ok("alias_list", map[string]any{})), &listed); err != nil {
		t.Fatal(err)
	}
	for _, a := range listed {
		names = append(names, a["name"].(string))
	}
	if strings.Join(names, ",") != "agg_all,agg_count,by_text,by_text_json,multi_count,multi_rows,none_count,one_emo,texts" {
		t.Fatalf("alias_list names: %v", names)
	}
}

// TestMiniAppAggregateScenarios replays the contract's scenarios 10–13 and
// 20 (query_aggregate) over HTTP, and the scalar aggregators.
func TestMiniAppAggregateScenarios(t *testing.T) {
	g, sid, _ := aliasFixture(t)
	single := map[string]any{"kind": "single", "value": "agg_one"}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		// 10, 11
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "count"}}, `{"kind":"count","value":3}`},
		{map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{"multi_x", "multi_y"}}, "aggregator": map[string]any{"kind": "count"}}, `{"kind":"count","value":5}`},
		// 12
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "group_by", "by_field": "tag",
			"having": map[string]any{"type": "eq", "field": "tag", "value": "a"}, "inner": map[string]any{"kind": "sum", "field": "amount"}}},
			`{"kind":"groups","value":[{"key":"a","count":2,"value":10}]}`},
		{map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{"multi_x", "multi_y"}}, "aggregator": map[string]any{"kind": "group_by", "by_field": "tag"}},
			`{"kind":"groups","value":[{"key":"a","count":2},{"key":"b","count":2},{"key":"c","count":1}]}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "group_by", "by_field": "tag", "inner": map[string]any{"kind": "avg", "field": "amount"}}},
			`{"kind":"groups","value":[{"key":"a","count":2,"value":5.0},{"key":"b","count":1,"value":5.0}]}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "sum", "field": "amount"}}, `{"kind":"value","value":15}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "avg", "field": "amount"}}, `{"kind":"value","value":5.0}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "min", "field": "amount"}}, `{"kind":"value","value":4}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "max", "field": "amount"}}, `{"kind":"value","value":6}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "sum", "field": "amount"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "zz"}}, `{"kind":"value","value":null}`},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "a"}}, `{"kind":"count","value":2}`},
	} {
		text, isErr := g.miniTool(sid, "query_aggregate", c.args)
		if isErr || text != c.want {
			t.Errorf("query_aggregate %v: %v %s, want %s", c.args, isErr, text, c.want)
		}
	}
	eleven := make([]any, 11)
	for i := range eleven {
		eleven[i] = "agg_one"
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		// 13, 20
		{map[string]any{"sources": map[string]any{"kind": "single", "value": "nope"}, "aggregator": map[string]any{"kind": "count"}}, "table not found: nope"},
		{map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{}}, "aggregator": map[string]any{"kind": "count"}}, "aggregator error: sources must contain at least one table"},
		{map[string]any{"sources": map[string]any{"kind": "pattern", "value": "agg*"}, "aggregator": map[string]any{"kind": "count"}}, "aggregator error: sources must contain at least one table"},
		{map[string]any{"sources": map[string]any{"kind": "multi", "value": eleven}, "aggregator": map[string]any{"kind": "count"}}, "aggregator error: too many sources: 11 (SQLITE_MAX_ATTACHED = 10)"},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "group_by", "by_field": "tag", "inner": map[string]any{"kind": "group_by", "by_field": "tag"}}}, "aggregator error: nested GroupBy is not supported in Phase 1"},
		{map[string]any{"sources": single, "aggregator": map[string]any{"kind": "sum", "field": "nope"}}, "validation error on field 'nope': aggregator field 'nope' is not declared in schema"},
		{map[string]any{"sources": map[string]any{"kind": "single", "value": "bad-name"}, "aggregator": map[string]any{"kind": "count"}}, "table not found: bad-name"},
	} {
		text, isErr := g.miniTool(sid, "query_aggregate", c.args)
		if !isErr || text != c.want {
			t.Errorf("query_aggregate %v: %v %q, want %q", c.args, isErr, text, c.want)
		}
	}
}

// TestMiniAppAliasAggregatePermissions: the aggregate and aliases read
// through the permission pipeline. A role that may only create rows is
// refused the read with its roles named; a reader may run aliases but not
// store one (an alias store write needs update on the source).
func TestMiniAppAliasAggregatePermissions(t *testing.T) {
	g, sid, _ := aliasFixture(t)
	ctx := t.Context()
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: []store.Template{
			{Name: "agg-create", Rules: []store.Rule{{Object: "mi/app/agg_one", Actions: []string{"create"}}}},
			{Name: "agg-read", Rules: []store.Rule{{Object: "mi/app/agg_one", Actions: []string{"read"}, Columns: []string{"id", "created_at", "updated_at", "tag"}}}},
		},
		Bindings: []store.Binding{{Role: "agg-writer", Templates: []string{"agg-create"}}, {Role: "agg-reader", Templates: []string{"agg-read"}}},
		// The reader sees the rows tagged b only.
		Scopes: []store.Scope{{Role: "agg-reader", Object: "mi/app/agg_one", Filter: "tag=eq.b"}},
	}); err != nil {
		t.Fatal(err)
	}
	_, writer := g.identity("aggwriter", "mcp", []string{"agg-writer"}, nil, auth.MintOptions{})
	_, reader := g.identity("aggreader", "mcp", []string{"agg-reader"}, nil, auth.MintOptions{})
	count := map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"}, "aggregator": map[string]any{"kind": "count"}}
	wantRead := "insufficient permissions for this operation on this table, got [agg-writer]"
	wsid, rsid := g.start(writer), g.start(reader)
	var text string
	var isErr bool
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text, isErr = g.miniToolAs(writer, wsid, "query_aggregate", count)
		if isErr && text == wantRead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writer's aggregate: %v %q, want %q", isErr, text, wantRead)
		}
	}
	// The read tools refuse the writer alike.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list", map[string]any{"table": "agg_one"}},
		{"get", map[string]any{"table": "agg_one", "id": "0"}},
		{"content_view", map[string]any{"table": "agg_one", "id": "0", "field": "tag"}},
	} {
		if text, isErr := g.miniToolAs(writer, wsid, c.tool, c.args); !strings.Contains(text, wantRead) || (c.tool != "content_view" && !isErr) {
			t.Errorf("writer's %s: %v %q, want %q", c.tool, isErr, text, wantRead)
		}
	}
	// The row scope and the column limit apply to the aggregate: the
	// reader counts its rows only and cannot sum a column it may not see.
	if text, isErr := g.miniToolAs(reader, rsid, "query_aggregate", count); isErr || text != `{"kind":"count","value":1}` {
		t.Fatalf("reader's count: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"},
		"aggregator": map[string]any{"kind": "group_by", "by_field": "tag"}}); isErr || text != `{"kind":"groups","value":[{"key":"b","count":1}]}` {
		t.Fatalf("reader's groups: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"},
		"aggregator": map[string]any{"kind": "sum", "field": "amount"}}); !isErr || text != "validation error on field 'amount': aggregator field 'amount' is not declared in schema" {
		t.Fatalf("reader's sum of a hidden column: %v %q", isErr, text)
	}
	// The admin agent stores aliases over agg_one and emo; the writer
	// cannot run them, the reader runs the first (in its row scope) and
	// sees only it listed.
	for _, c := range []map[string]any{
		{"name": "agg_a", "table": "agg_one", "filter": map[string]any{"type": "in", "field": "tag", "values": []any{"a", "b"}}, "aggregator": map[string]any{"kind": "count"}},
		{"name": "emo_all", "table": "emo", "filter": map[string]any{"type": "like", "field": "text", "pattern": "%"}},
	} {
		if text, isErr := g.miniTool(sid, "alias_create", c); isErr {
			t.Fatalf("admin alias_create: %s", text)
		}
	}
	if text, isErr := g.miniTool(sid, "alias_run", map[string]any{"name": "agg_a"}); isErr || text != `{"kind":"count","value":3}` {
		t.Fatalf("admin's alias_run: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(writer, wsid, "alias_run", map[string]any{"name": "agg_a"}); !isErr || text != wantRead {
		t.Fatalf("writer's alias_run: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(writer, wsid, "alias_create", map[string]any{"name": "w", "table": "agg_one", "filter": map[string]any{"type": "eq", "field": "tag", "value": "a"}}); !isErr || text != wantRead {
		t.Fatalf("writer's alias_create: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "alias_run", map[string]any{"name": "agg_a"}); isErr || text != `{"kind":"count","value":1}` {
		t.Fatalf("reader's alias_run: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "alias_list", map[string]any{}); isErr || !strings.HasPrefix(text, `[{"name":"agg_a",`) || strings.Count(text, `"name"`) != 1 {
		t.Fatalf("reader's alias_list: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "alias_run", map[string]any{"name": "emo_all"}); !isErr || text != "table not found: emo" {
		t.Fatalf("reader's alias_run on emo: %v %q", isErr, text)
	}
	wantWrite := "insufficient permissions for this operation on this table, got [agg-reader]"
	if text, isErr := g.miniToolAs(reader, rsid, "alias_create", map[string]any{"name": "r", "table": "agg_one", "filter": map[string]any{"type": "eq", "field": "tag", "value": "a"}}); !isErr || text != wantWrite {
		t.Fatalf("reader's alias_create: %v %q", isErr, text)
	}
	if text, isErr := g.miniToolAs(reader, rsid, "alias_delete", map[string]any{"name": "agg_a"}); !isErr || text != wantWrite {
		t.Fatalf("reader's alias_delete: %v %q", isErr, text)
	}
	// A table the role may not touch at all is not found.
	if text, isErr := g.miniToolAs(reader, rsid, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "emo"}, "aggregator": map[string]any{"kind": "count"}}); !isErr || text != "table not found: emo" {
		t.Fatalf("reader's aggregate on emo: %v %q", isErr, text)
	}
}
