package miniapp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/miniapp"
)

// argsErr calls a tool that must answer a JSON-RPC invalid-params error
// with exactly the text want.
func (d *dropIn) argsErr(name string, args map[string]any, want string) {
	d.t.Helper()
	b, _ := json.Marshal(args)
	o := d.svc.Call(context.Background(), d.p, miniapp.Lookup(name), b)
	if o.Err == nil || o.Err.Error() != want {
		d.t.Fatalf("%s %v: %v %q %v, want the JSON-RPC error %q", name, args, o.IsError, o.Text, o.Err, want)
	}
}

func single(t string) map[string]any { return map[string]any{"kind": "single", "value": t} }
func multi(ts ...string) map[string]any {
	v := []any{}
	for _, t := range ts {
		v = append(v, t)
	}
	return map[string]any{"kind": "multi", "value": v}
}
func pattern(p string) map[string]any { return map[string]any{"kind": "pattern", "value": p} }
func sum(f string) map[string]any     { return map[string]any{"kind": "sum", "field": f} }

var count = map[string]any{"kind": "count"}

// TestAggregateTextsAsUpstream: every error query_aggregate answers, in
// mini-app-mcp's words and order of checks.
func TestAggregateTextsAsUpstream(t *testing.T) {
	user := t.TempDir()
	if err := mi.CreateTable(user, "agg", []byte("table: agg\nfields:\n  - name: tag\n    type: string\n  - name: amount\n    type: number\n")); err != nil {
		t.Fatal(err)
	}
	d := newDropIn(t, user, "")
	agg := func(sources, aggregator map[string]any) map[string]any {
		return map[string]any{"sources": sources, "aggregator": aggregator}
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = "agg"
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{agg(multi(), count), "aggregator error: sources must contain at least one table"},
		{agg(pattern("agg*"), count), "aggregator error: sources must contain at least one table"},
		{agg(single("nope"), count), "table not found: nope"},
		{agg(single(""), count), "table not found: "},
		{agg(multi(eleven...), count), "aggregator error: too many sources: 11 (SQLITE_MAX_ATTACHED = 10)"},
		// The first source is found before the sources are counted.
		{agg(multi(append([]string{"nope"}, eleven...)...), count), "table not found: nope"},
		{agg(multi("agg", "x-y"), count), "validation error on field 'source_table': source_table 'x-y' must contain only [A-Za-z0-9_]"},
		{agg(multi("agg", "9x"), count), "validation error on field 'source_table': source_table '9x' must start with [A-Za-z_]"},
		{agg(multi("agg", ""), count), "validation error on field 'source_table': source_table must not be empty"},
		// Names are checked before the aggregator, the aggregator before
		// the other sources are found.
		{agg(multi("agg", "nope", "x-y"), count), "validation error on field 'source_table': source_table 'x-y' must contain only [A-Za-z0-9_]"},
		{agg(multi("agg", "nope"), sum("missing")), "validation error on field 'missing': aggregator field 'missing' is not declared in schema"},
		{agg(multi("agg", "nope"), count), "table not found: nope"},
		{agg(single("agg"), sum("")), "validation error on field 'aggregator_field': aggregator_field must not be empty"},
		{agg(single("agg"), sum("1a")), "validation error on field 'aggregator_field': aggregator_field '1a' must start with [A-Za-z_]"},
		{agg(single("agg"), map[string]any{"kind": "avg", "field": "a-b"}), "validation error on field 'aggregator_field': aggregator_field 'a-b' must contain only [A-Za-z0-9_]"},
		{agg(single("agg"), map[string]any{"kind": "group_by", "by_field": "nope"}), "validation error on field 'nope': group_by field 'nope' is not declared in schema"},
		{agg(single("agg"), map[string]any{"kind": "group_by", "by_field": ""}), "validation error on field 'group_by_field': group_by_field must not be empty"},
		{agg(single("agg"), map[string]any{"kind": "group_by", "by_field": "tag", "inner": map[string]any{"kind": "group_by", "by_field": "tag"}}),
			"aggregator error: nested GroupBy is not supported in Phase 1"},
		// The aggregator is checked before the filter.
		{map[string]any{"sources": single("agg"), "aggregator": sum("nope"), "filter": map[string]any{"type": "eq", "field": "zz", "value": "a"}},
			"validation error on field 'nope': aggregator field 'nope' is not declared in schema"},
	} {
		d.fails("query_aggregate", c.args, c.want)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{agg(single("agg"), map[string]any{"kind": "median", "field": "amount"}), "invalid params: aggregator: unknown variant `median`, expected one of `count`, `sum`, `avg`, `min`, `max`, `group_by`"},
		{agg(single("agg"), map[string]any{"kind": "sum"}), "invalid params: aggregator: missing field `field`"},
		{agg(single("agg"), map[string]any{"kind": "group_by"}), "invalid params: aggregator: missing field `by_field`"},
		{agg(single("agg"), map[string]any{"kind": "group_by", "by_field": "tag", "inner": map[string]any{"kind": "max"}}), "invalid params: aggregator: missing field `field`"},
		{agg(map[string]any{"kind": "several", "value": "agg"}, count), "invalid params: sources: unknown variant `several`, expected one of `single`, `multi`, `pattern`"},
		{agg(map[string]any{"kind": "multi"}, count), "invalid params: sources: missing field `value`"},
	} {
		d.argsErr("query_aggregate", c.args, c.want)
	}
}

// TestAliasTextsAsUpstream: the alias tools' errors in mini-app-mcp's
// words, and what it accepts when storing an alias (only the first
// source is found, a template is not compiled, the aggregator is checked
// when the alias runs).
func TestAliasTextsAsUpstream(t *testing.T) {
	user := t.TempDir()
	d := newDropIn(t, user, "")
	create := func(name string, args map[string]any) map[string]any {
		args["name"] = name
		return args
	}
	run := func(name string) map[string]any { return map[string]any{"name": name} }

	d.fails("alias_create", create("x", map[string]any{"table": "emo", "sources": single("emo"), "filter": likeAll}),
		"`sources` and `table` are mutually exclusive (provide one only)")
	d.fails("alias_create", create("x", map[string]any{"table": "emo", "filter": likeAll, "filter_template": "{}"}),
		"filter and filter_template are mutually exclusive")
	d.fails("alias_create", create("x", map[string]any{"table": "emo"}), "either filter or filter_template is required")
	// The table is found before the filter arguments are looked at.
	d.fails("alias_create", create("x", map[string]any{"table": "nope"}), "table not found: nope")
	d.fails("alias_create", create("x", map[string]any{"sources": single(""), "filter": likeAll}), "table not found: ")
	d.fails("alias_create", create("x", map[string]any{"table": "emo", "filter": likeAll, "scope": "project"}),
		"alias_create: requested scope Project is not mounted on this server. Either omit the `scope` argument (the server will auto-select a mounted scope) or configure the corresponding directory (MINI_APP_PROJECT_DIR / MINI_APP_USER_DIR).")
	d.argsErr("alias_create", create("x", map[string]any{"table": "emo", "filter": likeAll, "scope": "global"}),
		"invalid params: scope: unknown variant `global`, expected `project` or `user`")
	d.argsErr("alias_create", create("x", map[string]any{"table": "emo", "filter": likeAll, "aggregator": map[string]any{"kind": "sum"}}),
		"invalid params: aggregator: missing field `field`")

	// Stored as given; the errors come when they run.
	d.ok("alias_create", create("later", map[string]any{"sources": multi("emo", "nope"), "aggregator": count, "filter": likeAll}))
	d.fails("alias_run", run("later"), "table not found: nope")
	d.ok("alias_create", create("badfield", map[string]any{"table": "emo", "aggregator": sum("nope"), "filter": likeAll}))
	d.fails("alias_run", run("badfield"), "validation error on field 'nope': aggregator field 'nope' is not declared in schema")
	d.ok("alias_create", create("empty", map[string]any{"sources": multi(), "aggregator": count, "filter": likeAll}))
	d.fails("alias_run", run("empty"), "aggregator error: alias sources resolved to zero tables")
	d.ok("alias_create", create("rows_multi", map[string]any{"sources": multi(), "filter": likeAll}))
	d.fails("alias_run", run("rows_multi"), "aggregator error: Multi/Pattern source aliases require an aggregator (Phase 2 limitation)")
	for name, c := range map[string]struct{ pattern, want string }{
		"p_zero":  {"zzz*", "aggregator error: SourceSpec::Pattern('zzz*') matched zero tables"},
		"p_empty": {"", "aggregator error: SourceSpec::Pattern must not be empty"},
		"p_meta":  {"e?o", "aggregator error: SourceSpec::Pattern('e?o') uses unsupported metachar '?' (only '*' is supported in Phase 2)"},
		"p_brack": {"e[m]o", "aggregator error: SourceSpec::Pattern('e[m]o') uses unsupported metachar '[' (only '*' is supported in Phase 2)"},
	} {
		d.ok("alias_create", create(name, map[string]any{"sources": pattern(c.pattern), "aggregator": count, "filter": likeAll}))
		d.fails("alias_run", run(name), c.want)
	}
	// A pattern without a star matches the names it starts.
	d.ok("alias_create", create("p_prefix", map[string]any{"sources": pattern("em"), "aggregator": count, "filter": likeAll}))
	if got := d.ok("alias_run", run("p_prefix")); got != `{"kind":"count","value":2}` {
		t.Fatalf("prefix pattern: %s", got)
	}
	d.ok("alias_create", create("p_mid", map[string]any{"sources": pattern("*m*"), "aggregator": count, "filter": likeAll}))
	if got := d.ok("alias_run", run("p_mid")); got != `{"kind":"count","value":2}` {
		t.Fatalf("*m* pattern: %s", got)
	}

	d.fails("alias_run", run("nope"), "alias not found: nope")
	d.fails("alias_delete", run("nope"), "alias not found: nope")
	d.fails("alias_create", create("later", map[string]any{"table": "emo", "filter": likeAll}), "alias already exists: later")

	// Templates: a bad one is stored and fails when run.
	d.ok("alias_create", create("bad_tpl", map[string]any{"table": "emo", "filter_template": "{{ x ", "params_schema": []any{"x"}}))
	if o := d.call("alias_run", map[string]any{"name": "bad_tpl", "params": map[string]any{"x": 1}}); !o.IsError || !strings.HasPrefix(o.Text, "alias template render error: ") {
		t.Fatalf("bad template: %v %q", o.IsError, o.Text)
	}
	d.ok("alias_create", create("tpl", map[string]any{"table": "emo", "filter_template": `{"type":"eq","field":"text","value":"{{ t }}"}`, "params_schema": []any{"t"}}))
	d.fails("alias_run", run("tpl"), "alias 'tpl' requires params but none were provided")
	d.fails("alias_run", map[string]any{"name": "tpl", "params": nil}, "alias 'tpl' requires params but none were provided")
	if o := d.call("alias_run", map[string]any{"name": "tpl", "params": "{not json"}); !o.IsError ||
		!strings.HasPrefix(o.Text, "alias template render error: params arrived as a string but failed JSON parse: ") {
		t.Fatalf("params string: %v %q", o.IsError, o.Text)
	}
	// params that are not an object give the template no values.
	if got := d.ok("alias_run", map[string]any{"name": "tpl", "params": []any{1}}); got != `[]` {
		t.Fatalf("params array: %s", got)
	}
	// Without params_schema the template text is read as a plain filter.
	d.ok("alias_create", create("tpl_plain", map[string]any{"table": "emo", "filter_template": `{"type":"eq","field":"text","value":"{{ t }}"}`}))
	if got := d.ok("alias_run", map[string]any{"name": "tpl_plain", "params": map[string]any{"t": "one"}}); got != `[]` {
		t.Fatalf("template without params_schema: %s", got)
	}
	d.ok("alias_create", create("tpl_junk", map[string]any{"table": "emo", "filter_template": `{{ t }}`}))
	if o := d.call("alias_run", run("tpl_junk")); !o.IsError || !strings.HasPrefix(o.Text, "schema parse error: filter parse error: ") {
		t.Fatalf("template without params_schema that is no filter: %v %q", o.IsError, o.Text)
	}

	// alias_list: the aggregator as upstream stores it, params_schema
	// only for templates, sorted by name.
	d.ok("alias_create", create("a_group", map[string]any{"table": "emo", "aggregator": map[string]any{"by_field": "text", "kind": "group_by"},
		"filter": likeAll, "params_schema": []any{"ignored"}}))
	var listed []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(d.ok("alias_list", map[string]any{"table": "emo"})), &listed); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range listed {
		var n string
		_ = json.Unmarshal(a["name"], &n)
		names = append(names, n)
		if n == "a_group" {
			if got := string(a["aggregator"]); got != `{"kind":"group_by","by_field":"text","having":null,"inner":null}` {
				t.Fatalf("stored aggregator: %s", got)
			}
			if got := string(a["params_schema"]); got != "null" {
				t.Fatalf("params_schema of a plain filter: %s", got)
			}
		}
	}
	if got := strings.Join(names, ","); got != "a_group,bad_tpl,badfield,later,p_mid,p_prefix,tpl,tpl_junk,tpl_plain" {
		t.Fatalf("alias_list table emo: %s", got)
	}
}
