package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// untypedTools are the mini-app tools without an output schema: content_*
// answer their edit errors as successes ({"error": …}), alias_run answers
// rows or an aggregate.
var untypedTools = []string{"alias_run", "content_insert", "content_replace", "content_view"}

// outputSchemas compiles the output schema of each tool the token lists,
// read from the raw tools/list answer.
func (g *gateway) outputSchemas(token string) (map[string]*jsonschema.Schema, []string) {
	g.t.Helper()
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
				Annotations  map[string]any  `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(g.call(token, "", "tools/list", nil).raw, &list); err != nil {
		g.t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	var names []string
	for _, tl := range list.Result.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.OutputSchema))
		if err != nil {
			g.t.Fatalf("%s: outputSchema %s: %v", tl.Name, tl.OutputSchema, err)
		}
		if doc.(map[string]any)["type"] != "object" {
			g.t.Fatalf("%s: outputSchema is not of type object: %s", tl.Name, tl.OutputSchema)
		}
		c := jsonschema.NewCompiler()
		url := "mem://" + tl.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			g.t.Fatal(err)
		}
		if out[tl.Name], err = c.Compile(url); err != nil {
			g.t.Fatalf("%s: outputSchema does not compile: %v", tl.Name, err)
		}
	}
	sort.Strings(names)
	return out, names
}

// TestTypedOutputs: every gateway tool, and every mini-app tool whose
// answer has one shape, declares an output schema, and the structured
// content of each of its answers, as mcp-go's client receives it,
// validates against it — on the direct road (2026-07-28 and the
// handshake) and on mcp-go's. A refusal carries no structured content.
func TestTypedOutputs(t *testing.T) {
	f := newCustomFixture(t)
	schemas, listed := f.outputSchemas(f.agent)
	for _, name := range listed {
		if _, ok := schemas[name]; ok == slices.Contains(untypedTools, name) {
			t.Errorf("%s: output schema declared %v", name, ok)
		}
	}
	if len(listed) != 34 { // 13 gateway tools, 21 mini-app tools
		t.Fatalf("agent lists %d tools: %v", len(listed), listed)
	}
	for _, era := range []struct {
		name   string
		opts   []client.ClientOption
		direct bool
	}{
		{"2026-07-28", nil, true},
		{"handshake", []client.ClientOption{client.WithProtocolVersion("2025-11-25")}, true},
		{"handshake mcp-go", []client.ClientOption{client.WithProtocolVersion("2025-06-18")}, false},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			f.srv.SetDirect(era.direct)
			defer f.srv.SetDirect(true)
			direct := f.srv.DirectCalls()
			cl, _ := f.sdkClient(ctx, f.agent, era.opts...)
			called := map[string]bool{}
			var sid string
			// call calls a tool with the session_id argument and checks its
			// answer against the tool's output schema; it returns the
			// structured content (the decoded text for an untyped tool).
			call := func(name string, args map[string]any) map[string]any {
				t.Helper()
				if sid != "" && name != "help" {
					args["session_id"] = sid
				}
				res, err := cl.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				text := res.Content[0].(mcpgo.TextContent).Text
				if res.IsError {
					t.Fatalf("%s %v: refused: %s", name, args, text)
				}
				called[name] = true
				sch := schemas[name]
				if sch == nil {
					if res.StructuredContent != nil {
						t.Fatalf("%s: structuredContent without an output schema: %v", name, res.StructuredContent)
					}
					var v map[string]any
					_ = json.Unmarshal([]byte(text), &v)
					return v
				}
				b, err := json.Marshal(res.StructuredContent)
				if err != nil || res.StructuredContent == nil {
					t.Fatalf("%s: no structuredContent: %s", name, text)
				}
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if err := sch.Validate(v); err != nil {
					t.Fatalf("%s: structuredContent %s does not validate: %v", name, b, err)
				}
				m, _ := res.StructuredContent.(map[string]any)
				return m
			}

			sid = call("start_ai_session", map[string]any{"name": "typed", "context": "typed outputs"})["session_id"].(string)
			call("help", map[string]any{})
			call("help", map[string]any{"tool": "auto_read_rows"})
			call("help", map[string]any{"tool": "list"})
			call("ping", map[string]any{})
			call("meta_list_databases", map[string]any{})
			call("meta_list_tables", map[string]any{"type": "mi", "schema": "app"})
			call("meta_describe_table", map[string]any{"type": "mi", "schema": "app", "table": "notes"})
			call("meta_list_custom_apis", map[string]any{})
			call("call_api", map[string]any{"uri": "employees/by-department", "method": "GET", "version": 1, "params": map[string]any{"dept": 6}})
			call("call_api", map[string]any{"uri": "employees/transfer", "method": "POST", "version": 1, "params": map[string]any{"id": 1, "dept": 7}})
			notes := func(extra map[string]any) map[string]any {
				return mergeMaps(map[string]any{"type": "mi", "schema": "app", "table": "notes"}, extra)
			}
			title := "typed " + era.name
			call("auto_read_rows", notes(map[string]any{"page_size": 2, "page_number": 0, "query": map[string]any{"oy": "title.as"}}))
			call("auto_insert_rows", notes(map[string]any{"rows": []any{map[string]any{"title": title}}}))
			call("auto_update_rows", notes(map[string]any{"query": map[string]any{"title": "eq." + title}, "values": map[string]any{"body": "b"}}))
			call("auto_delete_rows", notes(map[string]any{"query": map[string]any{"title": "eq." + title}}))

			call("info", map[string]any{"table": "notes"})
			id := call("create", map[string]any{"table": "notes", "data": map[string]any{"title": title, "body": "one\ntwo"}})["id"].(string)
			call("get", map[string]any{"table": "notes", "id": id})
			call("list", map[string]any{"table": "notes", "limit": 2})
			call("update", map[string]any{"table": "notes", "id": id, "data": map[string]any{"body": "three\nfour"}})
			call("row_restore", map[string]any{"table": "notes", "id": id, "at_unix_secs": time.Now().Unix() + 60})
			call("content_view", map[string]any{"table": "notes", "id": id, "field": "body"})
			call("content_replace", map[string]any{"table": "notes", "id": id, "field": "body", "old_str": "three", "new_str": "3"})
			call("content_insert", map[string]any{"table": "notes", "id": id, "field": "body", "line": 0, "content": "zero"})
			call("query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "notes"}, "aggregator": map[string]any{"kind": "count"}})
			alias := "typed_" + fmt.Sprint(len(era.opts))
			call("alias_create", map[string]any{"name": alias, "table": "notes", "filter": map[string]any{"type": "eq", "field": "title", "value": title}})
			call("alias_list", map[string]any{})
			call("alias_run", map[string]any{"name": alias})
			call("alias_delete", map[string]any{"name": alias})
			table := "typed_" + fmt.Sprint(len(era.opts))
			fields := []any{map[string]any{"name": "title", "type": "string", "required": true}}
			call("schema_create", map[string]any{"table": table, "scope": "project", "fields": fields})
			call("schema_create", map[string]any{"table": table + "_dry", "scope": "project", "fields": fields, "dry_run": true})
			fields = append(fields, map[string]any{"name": "n", "type": "number"})
			call("schema_update", map[string]any{"table": table, "scope": "project", "fields": fields})
			call("schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": table, "sql": "DELETE FROM rows"}}})
			call("schema_batch", map[string]any{"dry_run": true, "ops": []any{map[string]any{"op": "schema_update", "table": table, "scope": "project", "fields": fields}}})
			call("schema_delete", map[string]any{"table": table, "scope": "project"})
			call("data_snapshot", map[string]any{"table": "notes"})
			call("data_snapshot", map[string]any{"table": "notes", "dry_run": true})
			call("row_materialize", map[string]any{"table": "notes", "selector": map[string]any{"type": "by_id", "id": id},
				"fields": map[string]any{"mode": "all"}, "format": "json", "dest": "typed-" + strings.ReplaceAll(era.name, " ", "-")})
			call("delete", map[string]any{"table": "notes", "id": id})
			call("end_ai_session", map[string]any{})

			for _, name := range listed {
				if !called[name] {
					t.Errorf("%s listed but not called", name)
				}
			}
			// The calls took the road asked for.
			if n := f.srv.DirectCalls() - direct; era.direct != (n > 0) {
				t.Errorf("%d calls on the direct road", n)
			}
		})
	}
	// A refusal is a result with isError and no structured content, on
	// both roads (toolReply checks it).
	sid := f.start(f.agent)
	for _, direct := range []bool{true, false} {
		f.srv.SetDirect(direct)
		code, _ := f.tool(f.agent, sid, "auto_delete_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes"}).refusal(t)
		if code != "INVALID" {
			t.Errorf("unfiltered delete (direct %v): %s", direct, code)
		}
		// mini-app-mcp's refusal: its display text.
		if r := f.tool(f.agent, sid, "get", map[string]any{"table": "notes", "id": "nope"}); !r.isError || r.text != "row not found: nope" {
			t.Errorf("get of no row (direct %v): %+v", direct, r)
		}
	}
	f.srv.SetDirect(true)
}

// TestDestructiveHints: the tools that change or remove rows say so.
func TestDestructiveHints(t *testing.T) {
	g := newGateway(t, time.Hour)
	var list struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnly    *bool `json:"readOnlyHint"`
					Destructive *bool `json:"destructiveHint"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(g.call(g.agent, "", "tools/list", nil).raw, &list); err != nil {
		t.Fatal(err)
	}
	hints := map[string]string{}
	for _, tl := range list.Result.Tools {
		a := tl.Annotations
		switch {
		case a.ReadOnly != nil && *a.ReadOnly && a.Destructive == nil:
			hints[tl.Name] = "read-only"
		case a.ReadOnly == nil && a.Destructive != nil && *a.Destructive:
			hints[tl.Name] = "destructive"
		case a.ReadOnly == nil && a.Destructive != nil:
			hints[tl.Name] = "write"
		default:
			t.Errorf("%s: annotations %+v", tl.Name, a)
		}
	}
	for name, want := range map[string]string{
		"auto_update_rows": "destructive", "auto_delete_rows": "destructive", "auto_insert_rows": "write",
		"auto_read_rows": "read-only", "update": "write", "delete": "destructive", "schema_batch": "destructive",
	} {
		if hints[name] != want {
			t.Errorf("%s is %q, want %q", name, hints[name], want)
		}
	}
}
