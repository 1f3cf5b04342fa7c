package mcp_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestMiniAppArrayFilters: array_contains and array_not_contains on an array
// field over HTTP (contract §4), not_contains matching rows without the
// field; a non-array field and a null value are refused; the filters work
// inside and/or and in aliases too.
func TestMiniAppArrayFilters(t *testing.T) {
	g, sid, _ := aliasFixture(t)
	for _, r := range []map[string]any{
		{"text": "untagged"},
		{"text": "nulled", "tags": nil},
		{"text": "numbers", "tags": []any{1, 2.5, true}},
	} {
		if text, isErr := g.miniTool(sid, "create", map[string]any{"table": "emo", "data": r}); isErr {
			t.Fatalf("create %v: %s", r, text)
		}
	}
	texts := func(filter map[string]any) []string {
		t.Helper()
		text, isErr := g.miniTool(sid, "list", map[string]any{"table": "emo", "filter": filter})
		if isErr {
			t.Fatalf("list %v: %s", filter, text)
		}
		var rs []struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(text), &rs); err != nil {
			t.Fatalf("not rows: %s", text)
		}
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i], _ = r.Data["text"].(string)
		}
		sort.Strings(out)
		return out
	}
	f := func(typ string, value any) map[string]any {
		return map[string]any{"type": typ, "field": "tags", "value": value}
	}
	cases := []struct {
		name   string
		filter map[string]any
		want   string
	}{
		{"contains x", f("array_contains", "x"), "again hello"},
		{"contains y", f("array_contains", "y"), "again world"},
		{"contains none", f("array_contains", "z"), ""},
		{"contains int", f("array_contains", 1), "numbers"},
		{"contains float", f("array_contains", 2.5), "numbers"},
		{"contains bool", f("array_contains", true), "numbers"},
		{"not contains x", f("array_not_contains", "x"), "nulled numbers untagged world"},
		{"and", map[string]any{"type": "and", "filters": []any{f("array_contains", "x"), f("array_not_contains", "y")}}, "hello"},
		{"or", map[string]any{"type": "or", "filters": []any{f("array_contains", "y"), map[string]any{"type": "eq", "field": "text", "value": "untagged"}}}, "again untagged world"},
	}
	for _, c := range cases {
		if got := strings.Join(texts(c.filter), " "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}

	refused := []struct {
		name   string
		filter map[string]any
		want   string
	}{
		{"string field", map[string]any{"type": "array_contains", "field": "text", "value": "x"}, "validation error on field 'text': 'array_contains' filter requires an array field"},
		{"null value", f("array_not_contains", nil), "validation error on field 'tags': filter value for field 'tags' must not be null"},
		{"array value", f("array_contains", []any{"x"}), "validation error on field 'tags': filter value for field 'tags' must be a scalar (string, number, or boolean), got an object or array"},
		{"unknown field", map[string]any{"type": "array_contains", "field": "nope", "value": "x"}, "validation error on field 'nope': unknown field 'nope' — only schema-registered fields are allowed in filter"},
	}
	for _, c := range refused {
		text, isErr := g.miniTool(sid, "list", map[string]any{"table": "emo", "filter": c.filter})
		if !isErr || text != c.want {
			t.Errorf("%s: isError %v %q, want %q", c.name, isErr, text, c.want)
		}
	}

	// An alias with the filter runs it through the same road.
	if text, isErr := g.miniTool(sid, "alias_create", map[string]any{"name": "with_x", "table": "emo", "filter": f("array_contains", "x")}); isErr {
		t.Fatalf("alias_create: %s", text)
	}
	text, isErr := g.miniTool(sid, "alias_run", map[string]any{"name": "with_x"})
	if isErr || strings.Count(text, `"id"`) != 2 || !strings.Contains(text, "hello") || !strings.Contains(text, "again") {
		t.Fatalf("alias_run: %v %s", isErr, text)
	}
}
