package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Coverage audit of the 22 drop-in tools (every call goes through
// replayCall, which requires isError present; ok/okObj/okRows require it
// false). "+" marks what the last init blocks added; table "" on every
// tool, ALIAS_TEMPLATE_ERROR and the reload refusal are in the last one.
//
//	tool            strict success shape (scenario)          documented errors (scenario)
//	info            info, handshake                          TABLE_REQUIRED/NOT_FOUND (multi_table_errors)
//	create          round_trip, create keeps …               VALIDATION (create_data_string), TABLE_* (multi_table_errors)
//	get             round_trip, projection                   NOT_FOUND, AMBIGUOUS_ID (round_trip), TABLE_*
//	list            round_trip, projection, order_by …       VALIDATION (filter_validate_texts), TABLE_*
//	update          round_trip, update_merge/replace         NOT_FOUND, VALIDATION; + TABLE_*, + AMBIGUOUS_ID
//	delete          round_trip                               NOT_FOUND; + TABLE_*, + AMBIGUOUS_ID
//	reload          reload                                   + SCHEMA_ERROR (legacy yaml unparsable; upstream never answers CONFIG_ERROR with mounts)
//	schema_create   schema_tools_lifecycle                   SCHEMA_EXISTS; + VALIDATION (name, scope, type)
//	schema_update   schema_tools_lifecycle                   + TABLE_NOT_FOUND
//	schema_delete   schema_tools_lifecycle                   + TABLE_NOT_FOUND
//	schema_batch    + replace commit and dry run, exact      VALIDATION (schema_batch_rules); + BATCH_ABORTED, + TABLE_NOT_FOUND
//	data_snapshot   data_snapshot_dry_run; + snapshot shape  + SNAPSHOT_ERROR, + non-matching scope
//	row_materialize row_materialize_json, yaml bytes         MATERIALIZE_DEST_RELATIVE; + ROW_NOT_FOUND, FIELD_UNKNOWN, INVALID_PARAM, EMPTY_RESULT; + TABLE_*
//	alias_create    alias_lifecycle                          ALIAS_ALREADY_EXISTS, sources+table; + TABLE_*, + table "", + filter/template
//	alias_list      alias_lifecycle (entry exact)            —
//	alias_run       alias_* (e2e 5–19)                       ALIAS_NOT_FOUND, ALIAS_PARAMS_REQUIRED, zero tables; + multi without aggregator, + ALIAS_TEMPLATE_ERROR
//	alias_delete    alias_lifecycle                          ALIAS_NOT_FOUND
//	query_aggregate aggregate_* (e2e 10–13, 20), statement   TABLE_NOT_FOUND, AGGREGATOR_ERROR; + nested group_by, + VALIDATION
//	row_restore     history_*                                NOT_FOUND; + TABLE_*
//	content_view    content_view                             TYPE_ERROR, TABLE_*; + AMBIGUOUS_ID (as {"error":"ERROR"})
//	content_replace content_replace_*                        STRING_NOT_FOUND, AMBIGUOUS, VALIDATION; + TABLE_*
//	content_insert  content_insert                           OUT_OF_RANGE, TYPE_ERROR; + TABLE_*
//
// Handshake (2024-11-05 → 2025-03-26, Mcp-Session-Id over HTTP) is in
// handshake; docs://quickstart's mode detection and schema://json with
// table among several query parameters in resources.

// TestReplayMiniApp replays mini-app-mcp's acceptance scenarios (the
// contract's §8: stdio e2e 1–20, the content tools, history and the
// server behaviours observable over the wire) against the real binary in
// drop-in mode, once over stdio and once over HTTP, on a data directory
// written by plain SQL and files in mini-app-mcp's layout. Each transport
// gets its own directory and process; its scenarios run in order on it.
func TestReplayMiniApp(t *testing.T) {
	for _, tr := range replayTransports {
		t.Run(tr.name, func(t *testing.T) {
			e := newReplayEnv(t, tr)
			for _, sc := range replayScenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, e) })
			}
		})
	}
}

// The tables of the replay directory, as mini-app-mcp users write them.
const (
	replayEmoYAML = `table: emo
title: Emotions
description: Short feelings with tags.
fields:
  - name: text
    type: string
    required: true
    description: The feeling.
  - name: tags
    type: array
`
	replayNotesYAML = `table: notes
fields:
  - name: title
    type: string
    required: true
  - name: body
    type: string
    description: Long text, edited with the content tools.
  - name: tags
    type: array
`
	replayPrefsYAML = `table: prefs
fields:
  - name: name
    type: string
    required: true
  - name: nick
    type: string
  - name: score
    type: number
  - name: meta
    type: object
`
	replayHistYAML = `table: hist
history: full
fields:
  - name: title
    type: string
    required: true
  - name: body
    type: string
`
)

func replayAggYAML(name string) string {
	return "table: " + name + "\nfields:\n  - name: tag\n    type: string\n  - name: amount\n    type: number\n"
}

// replayTables are the directory names of the user dir's tables.
var replayTables = []string{"agg_one", "emo", "hist", "multi_two", "notes", "prefs"}

// histT0 is when the seeded history of hist's row starts.
const histT0 = 1700000000

type replayEnv struct {
	tr         replayTransport
	work, user string
	env        []string
	c          replayConn
	ids        map[string]string // seeded rows by name
	created    []string          // ids the scenarios created, in order
}

func newReplayEnv(t *testing.T, tr replayTransport) *replayEnv {
	work := t.TempDir()
	e := &replayEnv{tr: tr, work: work, user: filepath.Join(work, "user"), ids: map[string]string{}}
	e.env = []string{"MINI_APP_USER_DIR=" + e.user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "no-project")}
	now := time.Now().Unix() - 3600
	at := func(data string) seedEntry { return seedEntry{at: now, op: "create", data: data} }

	db := plainTable(t, e.user, "emo", replayEmoYAML)
	for i, d := range []string{`{"tags":["x"],"text":"hello"}`, `{"tags":["y"],"text":"world"}`, `{"tags":["x","y"],"text":"again"}`} {
		e.ids[fmt.Sprintf("emo%d", i)] = plainRow(t, db, "emo", at(d))
	}
	db = plainTable(t, e.user, "agg_one", replayAggYAML("agg_one"))
	for _, d := range []string{`{"amount":4,"tag":"a"}`, `{"amount":6,"tag":"a"}`, `{"amount":5,"tag":"b"}`} {
		plainRow(t, db, "agg_one", at(d))
	}
	db = plainTable(t, e.user, "multi_two", replayAggYAML("multi_two"))
	for _, d := range []string{`{"amount":1,"tag":"a"}`, `{"amount":2,"tag":"c"}`} {
		plainRow(t, db, "multi_two", at(d))
	}
	db = plainTable(t, e.user, "notes", replayNotesYAML)
	note := func(name, body string) {
		e.ids[name] = plainRow(t, db, "notes", at(compactJSON(t, map[string]any{"title": name, "body": body, "tags": []string{"n"}})))
	}
	note("view", "one\ntwo\nthree")
	note("uniq", "alpha beta\ngamma")
	note("amb", "foo one\ntwo foo\nfoo")
	note("cap", strings.TrimSuffix(strings.Repeat("x\n", 25), "\n"))
	note("all", "a-b-c-d")
	note("ins", "a\nb")
	note("utf8", strings.Repeat("é", 15)+"aMARK"+strings.Repeat("日本", 12)+"\n"+strings.Repeat("日", 11)+"MARKé"+strings.Repeat("ü", 20))
	note("long", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200))
	plainTable(t, e.user, "prefs", replayPrefsYAML)
	db = plainTable(t, e.user, "hist", replayHistYAML)
	e.ids["hist"] = plainRow(t, db, "hist",
		seedEntry{at: histT0, op: "create", data: `{"body":"v1","title":"first"}`},
		seedEntry{at: histT0 + 100, op: "update", data: `{"body":"v2","title":"second"}`},
		seedEntry{at: histT0 + 200, op: "update", data: `{"body":"v3","title":"third"}`})

	e.c = tr.open(t, work, e.env, "2025-03-26")
	return e
}

// call runs a tool: content[0].text, isError, or the JSON-RPC error. A
// result must hold exactly one text content and an isError member.
func (e *replayEnv) call(t *testing.T, tool string, args map[string]any) (string, bool, *rpcError) {
	t.Helper()
	return replayCall(t, e.c, tool, args)
}

func replayCall(t *testing.T, c replayConn, tool string, args map[string]any) (string, bool, *rpcError) {
	t.Helper()
	params := map[string]any{"name": tool}
	if args != nil {
		params["arguments"] = args
	}
	raw, rerr := c.rpc(t, "tools/call", params)
	if rerr != nil {
		return "", false, rerr
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError *bool `json:"isError"`
	}
	// Upstream's client asserts isError == Some(false) on every success:
	// the member is always there.
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" || res.IsError == nil {
		t.Fatalf("%s: result %s", tool, raw)
	}
	return res.Content[0].Text, res.IsError != nil && *res.IsError, nil
}

// ok calls a tool that must succeed and returns its text.
func (e *replayEnv) ok(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, isErr, rerr := e.call(t, tool, args)
	if rerr != nil || isErr {
		t.Fatalf("%s %v: isError %v %q %v", tool, args, isErr, text, rerr)
	}
	return text
}

// okJSON calls a tool that must succeed and decodes its text.
func (e *replayEnv) okJSON(t *testing.T, tool string, args map[string]any) any {
	t.Helper()
	text := e.ok(t, tool, args)
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: not JSON: %s", tool, text)
	}
	return v
}

func (e *replayEnv) okObj(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	m, ok := e.okJSON(t, tool, args).(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object", tool)
	}
	return m
}

func (e *replayEnv) okRows(t *testing.T, tool string, args map[string]any) []map[string]any {
	t.Helper()
	text := e.ok(t, tool, args)
	var rs []map[string]any
	if err := json.Unmarshal([]byte(text), &rs); err != nil {
		t.Fatalf("%s: not an array of rows: %s", tool, text)
	}
	return rs
}

// fails calls a tool that must answer isError with a text containing want.
func (e *replayEnv) fails(t *testing.T, tool string, args map[string]any, want string) string {
	t.Helper()
	text, isErr, rerr := e.call(t, tool, args)
	if rerr != nil || !isErr || !strings.Contains(text, want) {
		t.Fatalf("%s %v: isError %v %q %v; want isError containing %q", tool, args, isErr, text, rerr, want)
	}
	return text
}

// edit calls a content tool whose domain error is a successful result
// {"error":kind,"data":…}; it returns kind and data.
func (e *replayEnv) edit(t *testing.T, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	m := e.okObj(t, tool, args)
	kind, _ := m["error"].(string)
	data, _ := m["data"].(map[string]any)
	return kind, data
}

func (e *replayEnv) body(t *testing.T, name string) string {
	t.Helper()
	return e.okObj(t, "get", map[string]any{"table": "notes", "id": e.ids[name]})["data"].(map[string]any)["body"].(string)
}

func (e *replayEnv) toolList(t *testing.T) map[string]map[string]any {
	t.Helper()
	raw, rerr := e.c.rpc(t, "tools/list", map[string]any{})
	if rerr != nil {
		t.Fatalf("tools/list: %v", rerr)
	}
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, x := range res.Tools {
		out[x["name"].(string)] = x
	}
	return out
}

var uuid4RE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkRecord checks a RowRecord's shape: a UUIDv4 id and integer epoch
// second timestamps.
func checkRecord(t *testing.T, text string) map[string]any {
	t.Helper()
	var r map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &r); err != nil || len(r) != 4 {
		t.Fatalf("not a RowRecord: %s", text)
	}
	var id string
	var data map[string]any
	var created, updated int64
	if json.Unmarshal(r["id"], &id) != nil || !uuid4RE.MatchString(id) || json.Unmarshal(r["data"], &data) != nil ||
		json.Unmarshal(r["created_at"], &created) != nil || json.Unmarshal(r["updated_at"], &updated) != nil {
		t.Fatalf("RowRecord fields: %s", text)
	}
	if now := time.Now().Unix(); created < 1e9 || created > now+5 || updated < created {
		t.Fatalf("RowRecord timestamps: %s", text)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(text), &m)
	return m
}

func jsonEq(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: not JSON: %s", what, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

var like = map[string]any{"type": "like", "field": "text", "pattern": "%"}

// contractTools are the 22 tools of mini-app-mcp.
var contractTools = []string{"info", "create", "get", "list", "update", "delete", "reload", "schema_create", "schema_update",
	"schema_delete", "schema_batch", "data_snapshot", "row_materialize", "alias_create", "alias_list", "alias_run",
	"alias_delete", "query_aggregate", "row_restore", "content_view", "content_replace", "content_insert"}

type replayScenario struct {
	name string
	run  func(t *testing.T, e *replayEnv)
}

var replayScenarios = []replayScenario{
	{"handshake", func(t *testing.T, e *replayEnv) {
		for _, v := range []string{"2025-03-26", "2024-11-05"} {
			c := e.c
			if v != "2025-03-26" {
				c = e.tr.open(t, e.work, e.env, v)
			}
			init := c.initResult()
			// Upstream answers 2025-03-26, also to a 2024-11-05 client.
			if got, _ := init["protocolVersion"].(string); got != "2025-03-26" {
				t.Errorf("initialize %s: protocolVersion %q", v, got)
			}
			if hc, ok := c.(*replayHTTP); ok && hc.session == "" {
				t.Errorf("initialize %s over HTTP: no Mcp-Session-Id (upstream's backup script requires one)", v)
			}
			caps, _ := init["capabilities"].(map[string]any)
			if caps["tools"] == nil || caps["resources"] == nil {
				t.Errorf("initialize %s: capabilities %v", v, caps)
			}
			if info, _ := init["serverInfo"].(map[string]any); info["name"] == "" || info["version"] == "" {
				t.Errorf("initialize %s: serverInfo %v", v, info)
			}
			// The process has one implicit session: the instructions must
			// not send the agent to start_ai_session, which is not offered.
			if s, _ := init["instructions"].(string); s == "" || strings.Contains(s, "start_ai_session") || !strings.Contains(s, "one AI session") ||
				!strings.Contains(s, "multi-table mode") || !strings.Contains(s, "legacy single-table mode") {
				t.Errorf("initialize %s: instructions %q", v, s)
			}
			if text := replayMust(t, c, "info", map[string]any{"table": "emo"}); !strings.Contains(text, `"table": "emo"`) {
				t.Errorf("info after the %s handshake: %s", v, text)
			}
		}
		if e.tr.name == "http" {
			// mcp-go's own client speaks to the same endpoint.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cl, err := dial(t, ctx, e.c.(*replayHTTP).url, nil)
			if err != nil {
				t.Fatalf("mcp-go initialize: %v", err)
			}
			if text, isErr := callText(t, ctx, cl, "get", map[string]any{"table": "emo", "id": e.ids["emo0"]}); isErr || !strings.Contains(text, `"text":"hello"`) {
				t.Fatalf("mcp-go get: %v %s", isErr, text)
			}
			rl, err := cl.ListResources(ctx, mcpgo.ListResourcesRequest{})
			if err != nil || len(rl.Resources) != 3*len(replayTables)+5 {
				t.Fatalf("mcp-go resources/list: %v %v", err, rl)
			}
		}
	}},
	// e2e 1 and 2, and the unit test's 22 tools.
	{"tools_list", func(t *testing.T, e *replayEnv) {
		tools := e.toolList(t)
		for _, n := range []string{"create", "update"} {
			schema, _ := tools[n]["inputSchema"].(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			if d, _ := props["data"].(map[string]any); d["type"] != "object" {
				t.Errorf("%s: inputSchema.properties.data %v", n, props["data"])
			}
		}
		var missing []string
		for _, n := range contractTools {
			if tools[n] == nil {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			t.Errorf("tools/list lacks %v of the contract's 22 tools", missing)
		}
		// Upstream's unit test: exactly 22, none of the gateway's.
		if len(tools) != len(contractTools) {
			names := []string{}
			for n := range tools {
				names = append(names, n)
			}
			sort.Strings(names)
			t.Errorf("tools/list has %d tools, want the contract's 22: %v", len(tools), names)
		}
		for _, n := range contractTools {
			schema, _ := tools[n]["inputSchema"].(map[string]any)
			if tools[n] != nil && schema["type"] != "object" {
				t.Errorf("%s: inputSchema %v", n, schema)
			}
			// The gateway's schema argument has no place in drop-in mode.
			if props, _ := schema["properties"].(map[string]any); props["schema"] != nil {
				t.Errorf("%s: inputSchema has a schema property: %v", n, props["schema"])
			}
		}
		replayToolSchemas(t, tools)
	}},
	{"annotations", func(t *testing.T, e *replayEnv) {
		tools := e.toolList(t)
		hint := func(tool, h string) any {
			a, _ := tools[tool]["annotations"].(map[string]any)
			return a[h]
		}
		want := []struct {
			tool, hint string
			v          bool
		}{
			{"delete", "destructiveHint", true}, {"delete", "idempotentHint", true},
			{"create", "idempotentHint", false}, {"create", "readOnlyHint", false},
			{"info", "readOnlyHint", true}, {"get", "readOnlyHint", true}, {"list", "readOnlyHint", true},
			{"reload", "idempotentHint", false}, {"reload", "readOnlyHint", false},
			{"update", "idempotentHint", true}, {"row_restore", "idempotentHint", true}, {"content_view", "readOnlyHint", true},
			{"content_replace", "idempotentHint", false}, {"query_aggregate", "readOnlyHint", true},
		}
		for _, w := range want {
			if got := hint(w.tool, w.hint); got != w.v {
				t.Errorf("%s %s = %v, want %v", w.tool, w.hint, got, w.v)
			}
		}
		for _, n := range contractTools {
			if tools[n] != nil && hint(n, "openWorldHint") != false {
				t.Errorf("%s openWorldHint %v", n, hint(n, "openWorldHint"))
			}
		}
	}},
	// e2e 3.
	{"round_trip", func(t *testing.T, e *replayEnv) {
		rec := checkRecord(t, e.ok(t, "create", map[string]any{"table": "emo", "data": map[string]any{"text": "round", "tags": []any{"r"}}}))
		id := rec["id"].(string)
		e.created = append(e.created, id)
		if rec["created_at"] != rec["updated_at"] || !reflect.DeepEqual(rec["data"], map[string]any{"tags": []any{"r"}, "text": "round"}) {
			t.Fatalf("create: %v", rec)
		}
		got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "emo", "id": id}))
		if !reflect.DeepEqual(got, rec) {
			t.Fatalf("get %v, created %v", got, rec)
		}
		up := checkRecord(t, e.ok(t, "update", map[string]any{"table": "emo", "id": id, "data": map[string]any{"text": "round 2"}}))
		if up["created_at"] != rec["created_at"] || !reflect.DeepEqual(up["data"], map[string]any{"tags": []any{"r"}, "text": "round 2"}) {
			t.Fatalf("update: %v", up)
		}
		rs := e.okRows(t, "list", map[string]any{"table": "emo", "limit": 10})
		if len(rs) != 4 || rs[0]["id"] != id {
			t.Fatalf("list limit 10 (created_at DESC): %v", rs)
		}
		if rs := e.okRows(t, "list", map[string]any{"table": "emo", "limit": 2, "offset": 1}); len(rs) != 2 {
			t.Fatalf("list limit 2 offset 1: %v", rs)
		}
		jsonEq(t, "delete", e.ok(t, "delete", map[string]any{"table": "emo", "id": id}), `{"deleted":"`+id+`"}`)
		e.fails(t, "get", map[string]any{"table": "emo", "id": id}, "row not found: "+id)
		e.fails(t, "delete", map[string]any{"table": "emo", "id": id}, "row not found: "+id)
		// Id prefixes: a unique one resolves, an unknown one is NOT_FOUND
		// as given, the empty one matches every row.
		if got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "emo", "id": e.ids["emo1"][:8]})); got["id"] != e.ids["emo1"] {
			t.Fatalf("get by prefix: %v", got)
		}
		e.fails(t, "get", map[string]any{"table": "emo", "id": "zzzz"}, "row not found: zzzz")
		e.fails(t, "get", map[string]any{"table": "emo", "id": ""}, "ambiguous id prefix '': 3 candidates")
	}},
	// e2e 4.
	{"create_data_string", func(t *testing.T, e *replayEnv) {
		text, isErr, rerr := e.call(t, "create", map[string]any{"table": "emo", "data": `{"text":"x"}`})
		if rerr == nil && !isErr {
			t.Fatalf("create with data as a string succeeded: %s", text)
		}
		if isErr && text != "validation error on field '(root)': value must be a JSON object" {
			t.Fatalf("create with data as a string: %q", text)
		}
		e.fails(t, "create", map[string]any{"table": "emo", "data": map[string]any{"tags": []any{"a"}}}, "validation error on field 'text': required field missing")
		e.fails(t, "create", map[string]any{"table": "emo", "data": map[string]any{"text": 5}}, "validation error on field 'text': expected type 'string', got 'number'")
	}},
	// e2e 5 and 6.
	{"alias_lifecycle", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "alias_create", e.ok(t, "alias_create", map[string]any{"name": "all_emo", "table": "emo", "filter": like, "description": "every emo"}), `{"created":"all_emo"}`)
		var listed []map[string]any
		if err := json.Unmarshal([]byte(e.ok(t, "alias_list", map[string]any{})), &listed); err != nil || len(listed) != 1 {
			t.Fatalf("alias_list: %v %v", listed, err)
		}
		jsonEq(t, "alias_list entry", compactJSON(t, listed[0]), `{"name":"all_emo","sources":{"kind":"single","value":"emo"},"aggregator":null,`+
			`"filter":"{\"field\":\"text\",\"pattern\":\"%\",\"type\":\"like\"}","default_limit":null,"description":"every emo","params_schema":null,"fields":null,"order_by":null,"scope":"user"}`)
		if rs := e.okRows(t, "alias_run", map[string]any{"name": "all_emo"}); len(rs) != 3 {
			t.Fatalf("alias_run: %v", rs)
		}
		e.fails(t, "alias_create", map[string]any{"name": "all_emo", "table": "emo", "filter": like}, "alias already exists")
		jsonEq(t, "alias_delete", e.ok(t, "alias_delete", map[string]any{"name": "all_emo"}), `{"deleted":"all_emo"}`)
		e.fails(t, "alias_run", map[string]any{"name": "all_emo"}, "alias not found")
		// Scopes: the default is User when no project dir is mounted; an
		// explicit Project fails; delete works with the user scope only.
		e.fails(t, "alias_create", map[string]any{"name": "proj", "table": "emo", "filter": like, "scope": "project"},
			"alias_create: requested scope Project is not mounted on this server.")
		jsonEq(t, "alias_create scope user", e.ok(t, "alias_create", map[string]any{"name": "usr", "table": "emo", "filter": like, "scope": "user"}), `{"created":"usr"}`)
		if text := e.ok(t, "alias_list", map[string]any{"table": "emo"}); !strings.Contains(text, `"name":"usr"`) || !strings.Contains(text, `"scope":"user"`) {
			t.Fatalf("alias_list: %s", text)
		}
		jsonEq(t, "alias_delete user", e.ok(t, "alias_delete", map[string]any{"name": "usr"}), `{"deleted":"usr"}`)
		e.fails(t, "alias_delete", map[string]any{"name": "usr"}, "alias not found: usr")
	}},
	// e2e 7.
	{"alias_limits", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "one_emo", "table": "emo", "filter": like, "limit": 1})
		for _, c := range []struct {
			args map[string]any
			n    int
		}{{map[string]any{}, 1}, {map[string]any{"limit": 3}, 3}, {map[string]any{"limit": 3, "offset": 2}, 1}} {
			c.args["name"] = "one_emo"
			if rs := e.okRows(t, "alias_run", c.args); len(rs) != c.n {
				t.Fatalf("alias_run %v: %d rows, want %d", c.args, len(rs), c.n)
			}
		}
	}},
	// e2e 8 and 9.
	{"alias_template", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "by_text", "table": "emo",
			"filter_template": `{"type":"eq","field":"text","value":"{{ t }}"}`, "params_schema": []any{"t"}})
		var listed []map[string]any
		_ = json.Unmarshal([]byte(e.ok(t, "alias_list", map[string]any{"table": "emo"})), &listed)
		var found bool
		for _, a := range listed {
			if a["name"] == "by_text" {
				found = true
				if a["params_schema"] == nil {
					t.Fatalf("templated alias without params_schema: %v", a)
				}
			}
		}
		if !found {
			t.Fatalf("alias_list: %v", listed)
		}
		rs := e.okRows(t, "alias_run", map[string]any{"name": "by_text", "params": map[string]any{"t": "world"}})
		if len(rs) != 1 || rs[0]["data"].(map[string]any)["text"] != "world" {
			t.Fatalf("templated run: %v", rs)
		}
		e.fails(t, "alias_run", map[string]any{"name": "by_text"}, "requires params")
	}},
	// e2e 10.
	{"aggregate_single_count", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "count", e.ok(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"},
			"aggregator": map[string]any{"kind": "count"}}), `{"kind":"count","value":3}`)
		jsonEq(t, "sum", e.ok(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"},
			"aggregator": map[string]any{"kind": "sum", "field": "amount"}}), `{"kind":"value","value":15}`)
	}},
	// e2e 11.
	{"aggregate_multi_count", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "multi count", e.ok(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{"agg_one", "multi_two"}},
			"aggregator": map[string]any{"kind": "count"}}), `{"kind":"count","value":5}`)
	}},
	// e2e 12.
	{"aggregate_group_by", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "group_by", e.ok(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "agg_one"},
			"aggregator": map[string]any{"kind": "group_by", "by_field": "tag", "having": map[string]any{"type": "eq", "field": "tag", "value": "a"},
				"inner": map[string]any{"kind": "sum", "field": "amount"}}}), `{"kind":"groups","value":[{"key":"a","count":2,"value":10}]}`)
	}},
	// e2e 13.
	{"aggregate_unknown_source", func(t *testing.T, e *replayEnv) {
		e.fails(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "single", "value": "nope"},
			"aggregator": map[string]any{"kind": "count"}}, "table not found")
	}},
	// e2e 14.
	{"alias_multi_count", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "multi_count", "sources": map[string]any{"kind": "multi", "value": []any{"agg_one", "multi_two"}},
			"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "like", "field": "tag", "pattern": "%"}})
		jsonEq(t, "alias_run", e.ok(t, "alias_run", map[string]any{"name": "multi_count"}), `{"kind":"count","value":5}`)
	}},
	// e2e 15.
	{"alias_pattern", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "agg_all", "sources": map[string]any{"kind": "pattern", "value": "agg*"},
			"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "like", "field": "tag", "pattern": "%"}})
		jsonEq(t, "alias_run", e.ok(t, "alias_run", map[string]any{"name": "agg_all"}), `{"kind":"count","value":3}`)
	}},
	// e2e 16.
	{"alias_pattern_no_match", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "none_count", "sources": map[string]any{"kind": "pattern", "value": "zzz*"},
			"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "x"}})
		e.fails(t, "alias_run", map[string]any{"name": "none_count"}, "matched zero tables")
	}},
	// e2e 17.
	{"alias_sources_and_table", func(t *testing.T, e *replayEnv) {
		e.fails(t, "alias_create", map[string]any{"name": "both", "table": "emo", "sources": map[string]any{"kind": "single", "value": "emo"}, "filter": like},
			"mutually exclusive")
	}},
	// e2e 18.
	{"alias_stored_fields", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "texts", "table": "emo", "filter": like, "fields": map[string]any{"mode": "list", "fields": []any{"text"}}})
		rs := e.okRows(t, "alias_run", map[string]any{"name": "texts"})
		if len(rs) != 3 {
			t.Fatalf("alias_run: %v", rs)
		}
		for _, r := range rs {
			if d := r["data"].(map[string]any); len(d) != 1 || d["text"] == nil || r["id"] == nil {
				t.Fatalf("stored fields not applied: %v", r)
			}
		}
		// Runtime fields win over the stored ones.
		rs = e.okRows(t, "alias_run", map[string]any{"name": "texts", "fields": map[string]any{"mode": "list", "fields": []any{"tags"}}})
		if d := rs[0]["data"].(map[string]any); len(d) != 1 || d["tags"] == nil {
			t.Fatalf("runtime fields: %v", rs)
		}
	}},
	// e2e 19.
	{"alias_full_data", func(t *testing.T, e *replayEnv) {
		e.ok(t, "alias_create", map[string]any{"name": "full", "table": "emo", "filter": map[string]any{"type": "eq", "field": "text", "value": "again"}})
		rs := e.okRows(t, "alias_run", map[string]any{"name": "full"})
		if len(rs) != 1 || rs[0]["id"] != e.ids["emo2"] || !reflect.DeepEqual(rs[0]["data"], map[string]any{"tags": []any{"x", "y"}, "text": "again"}) {
			t.Fatalf("alias_run: %v", rs)
		}
	}},
	// e2e 20.
	{"aggregate_empty_multi", func(t *testing.T, e *replayEnv) {
		text := e.fails(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{}},
			"aggregator": map[string]any{"kind": "count"}}, "aggregator error")
		if !strings.Contains(text, "at least one") {
			t.Fatalf("empty multi: %q", text)
		}
	}},

	// Content tools.
	{"content_view", func(t *testing.T, e *replayEnv) {
		id := e.ids["view"]
		view := func(r []any) string {
			args := map[string]any{"table": "notes", "id": id, "field": "body"}
			if r != nil {
				args["view_range"] = r
			}
			return e.ok(t, "content_view", args)
		}
		jsonEq(t, "full", view(nil), `{"content":"     1  one\n     2  two\n     3  three\n"}`)
		jsonEq(t, "range", view([]any{2, 3}), `{"content":"     2  two\n     3  three\n"}`)
		jsonEq(t, "clamped", view([]any{2, 99}), `{"content":"     2  two\n     3  three\n"}`)
		jsonEq(t, "beyond", view([]any{7, 9}), `{"content":""}`)
		jsonEq(t, "inverted", view([]any{3, 1}), `{"content":""}`)
		// A string field the row lacks is one empty line.
		prefs := checkRecord(t, e.ok(t, "create", map[string]any{"table": "prefs", "data": map[string]any{"name": "nobody"}}))
		jsonEq(t, "absent field", e.ok(t, "content_view", map[string]any{"table": "prefs", "id": prefs["id"], "field": "nick"}), `{"content":"     1  \n"}`)
		e.ok(t, "delete", map[string]any{"table": "prefs", "id": prefs["id"]})
		// A long text is shown whole.
		m := e.okObj(t, "content_view", map[string]any{"table": "notes", "id": e.ids["long"], "field": "body"})
		if c := m["content"].(string); len(c) != len("     1  ")+200*45+1 {
			t.Fatalf("long view: %d bytes", len(c))
		}
	}},
	{"content_replace_unique", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "replace", e.ok(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["uniq"], "field": "body", "old_str": "beta", "new_str": "BETA"}), `{"matches":1}`)
		if b := e.body(t, "uniq"); b != "alpha BETA\ngamma" {
			t.Fatalf("body %q", b)
		}
	}},
	{"content_string_not_found", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "not found", e.ok(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["uniq"], "field": "body", "old_str": "zeta", "new_str": "x"}),
			`{"error":"STRING_NOT_FOUND","data":{"code":"STRING_NOT_FOUND","field":"body"}}`)
	}},
	{"content_ambiguous", func(t *testing.T, e *replayEnv) {
		kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["amb"], "field": "body", "old_str": "foo", "new_str": "bar"})
		if kind != "AMBIGUOUS" || data["code"] != "AMBIGUOUS_MATCH" || data["matches"] != float64(3) ||
			data["hint"] != "Pass view_range=[start,end] to scope, or replace_all=true to batch." {
			t.Fatalf("ambiguous: %s %v", kind, data)
		}
		var pos []string
		for _, c := range data["candidates"].([]any) {
			c := c.(map[string]any)
			pos = append(pos, fmt.Sprintf("%v:%v", c["line"], c["col"]))
			if !strings.Contains(c["snippet"].(string), "foo") {
				t.Fatalf("snippet %v", c)
			}
		}
		if strings.Join(pos, " ") != "1:1 2:5 3:1" {
			t.Fatalf("candidates at %v", pos)
		}
		if b := e.body(t, "amb"); b != "foo one\ntwo foo\nfoo" {
			t.Fatalf("ambiguous replace changed the body: %q", b)
		}
	}},
	{"content_view_range_scope", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "scoped", e.ok(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["amb"], "field": "body", "old_str": "foo", "new_str": "bar",
			"view_range": []any{2, 2}}), `{"matches":1}`)
		if b := e.body(t, "amb"); b != "foo one\ntwo bar\nfoo" {
			t.Fatalf("body %q", b)
		}
		// Outside the scope, nothing is found.
		kind, _ := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["amb"], "field": "body", "old_str": "one", "new_str": "1", "view_range": []any{2, 3}})
		if kind != "STRING_NOT_FOUND" {
			t.Fatalf("scoped miss: %s", kind)
		}
		kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["amb"], "field": "body", "old_str": "foo", "new_str": "1", "view_range": []any{1, 3}})
		if kind != "AMBIGUOUS" || data["matches"] != float64(2) {
			t.Fatalf("scope 1-3: %s %v", kind, data)
		}
	}},
	{"content_replace_all", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "replace_all", e.ok(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["all"], "field": "body", "old_str": "-", "new_str": "+", "replace_all": true}), `{"matches":3}`)
		if b := e.body(t, "all"); b != "a+b+c+d" {
			t.Fatalf("body %q", b)
		}
	}},
	{"content_ambiguous_capped", func(t *testing.T, e *replayEnv) {
		kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["cap"], "field": "body", "old_str": "x", "new_str": "y"})
		cands, _ := data["candidates"].([]any)
		if kind != "AMBIGUOUS" || data["matches"] != float64(25) || len(cands) != 20 ||
			data["hint"] != "Pass view_range=[start,end] to scope, or replace_all=true to batch. (showing first 20 of 25 matches)" {
			t.Fatalf("capped: %s %v", kind, data)
		}
		if last := cands[19].(map[string]any); last["line"] != float64(20) || last["col"] != float64(1) {
			t.Fatalf("20th candidate %v", last)
		}
	}},
	{"content_insert", func(t *testing.T, e *replayEnv) {
		id := e.ids["ins"]
		jsonEq(t, "line 0", e.ok(t, "content_insert", map[string]any{"table": "notes", "id": id, "field": "body", "line": 0, "content": "top"}), `{"line":0,"inserted_lines":1}`)
		if b := e.body(t, "ins"); b != "top\na\nb" {
			t.Fatalf("after line 0: %q", b)
		}
		jsonEq(t, "last line", e.ok(t, "content_insert", map[string]any{"table": "notes", "id": id, "field": "body", "line": 3, "content": "end"}), `{"line":3,"inserted_lines":1}`)
		if b := e.body(t, "ins"); b != "top\na\nb\nend" {
			t.Fatalf("after last line: %q", b)
		}
		jsonEq(t, "middle", e.ok(t, "content_insert", map[string]any{"table": "notes", "id": id, "field": "body", "line": 1, "content": "mid"}), `{"line":1,"inserted_lines":1}`)
		jsonEq(t, "beyond", e.ok(t, "content_insert", map[string]any{"table": "notes", "id": id, "field": "body", "line": 6, "content": "x"}),
			`{"error":"OUT_OF_RANGE","data":{"code":"OUT_OF_RANGE","line":6,"total_lines":5}}`)
		if b := e.body(t, "ins"); b != "top\nmid\na\nb\nend" {
			t.Fatalf("body %q", b)
		}
	}},
	{"content_type_error", func(t *testing.T, e *replayEnv) {
		for _, tool := range []string{"content_view", "content_replace", "content_insert"} {
			args := map[string]any{"table": "notes", "id": e.ids["view"], "field": "tags", "old_str": "n", "new_str": "m", "line": 0, "content": "x"}
			jsonEq(t, tool, e.ok(t, tool, args), `{"error":"TYPE_ERROR","data":{"code":"TYPE_ERROR","field":"tags","actual_type":"array"}}`)
		}
		kind, data := e.edit(t, "content_view", map[string]any{"table": "notes", "id": e.ids["view"], "field": "nope"})
		if kind != "ERROR" || data["code"] != "SCHEMA_ERROR" || !strings.HasPrefix(data["message"].(string), "schema parse error: ") {
			t.Fatalf("unknown field: %s %v", kind, data)
		}
		kind, data = e.edit(t, "content_view", map[string]any{"table": "notes", "id": "ffffffff", "field": "body"})
		if kind != "ERROR" || data["code"] != "NOT_FOUND" || data["message"] != "row not found: ffffffff" {
			t.Fatalf("unknown row: %s %v", kind, data)
		}
		// Table resolution errors stay normal isError results.
		e.fails(t, "content_view", map[string]any{"table": "nope", "id": e.ids["view"], "field": "body"}, "table not found: nope")
		e.fails(t, "content_view", map[string]any{"id": e.ids["view"], "field": "body"}, "table argument is required in multi-table mode")
	}},
	{"content_inverted_range", func(t *testing.T, e *replayEnv) {
		for _, r := range [][]any{{3, 1}, {0, 2}} {
			kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["view"], "field": "body", "old_str": "two", "new_str": "2", "view_range": r})
			if kind != "VALIDATION" || data["code"] != "VALIDATION_ERROR" {
				t.Fatalf("view_range %v: %s %v", r, kind, data)
			}
		}
		if b := e.body(t, "view"); b != "one\ntwo\nthree" {
			t.Fatalf("body %q", b)
		}
	}},
	{"content_empty_old_str", func(t *testing.T, e *replayEnv) {
		kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["view"], "field": "body", "old_str": "", "new_str": "x"})
		if kind != "VALIDATION" || data["code"] != "VALIDATION_ERROR" || !strings.Contains(data["message"].(string), "old_str") {
			t.Fatalf("empty old_str: %s %v", kind, data)
		}
	}},
	{"content_utf8_snippet", func(t *testing.T, e *replayEnv) {
		kind, data := e.edit(t, "content_replace", map[string]any{"table": "notes", "id": e.ids["utf8"], "field": "body", "old_str": "MARK", "new_str": "m"})
		if kind != "AMBIGUOUS" || data["matches"] != float64(2) {
			t.Fatalf("utf8: %s %v", kind, data)
		}
		for _, c := range data["candidates"].([]any) {
			c := c.(map[string]any)
			s := c["snippet"].(string)
			if !utf8.ValidString(s) || !strings.Contains(s, "MARK") || len(s) > 30+4+30+6 || len(s) < 40 {
				t.Fatalf("snippet %q (%d bytes)", s, len(s))
			}
		}
		// Columns are byte offsets + 1.
		c0, c1 := data["candidates"].([]any)[0].(map[string]any), data["candidates"].([]any)[1].(map[string]any)
		if c0["line"] != float64(1) || c0["col"] != float64(15*2+2) || c1["line"] != float64(2) || c1["col"] != float64(11*3+1) {
			t.Fatalf("columns %v %v", c0, c1)
		}
	}},

	// History.
	{"history_restore_at", func(t *testing.T, e *replayEnv) {
		id := e.ids["hist"]
		for _, c := range []struct {
			at    int64
			title string
		}{{histT0 + 150, "second"}, {histT0 + 100, "second"}, {histT0, "first"}, {histT0 + 99, "first"}, {histT0 + 5000, "third"}} {
			rec := checkRecord(t, e.ok(t, "row_restore", map[string]any{"table": "hist", "id": id, "at_unix_secs": c.at}))
			if rec["id"] != id || rec["data"].(map[string]any)["title"] != c.title || rec["created_at"] != float64(histT0) {
				t.Fatalf("restore at %d: %v, want %s", c.at, rec, c.title)
			}
		}
		// A live row's restore is an update entry holding the restored data.
		var op, data string
		var n int
		db := plainDB(t, e.user, "hist")
		if err := db.QueryRow(`SELECT op, data_json, (SELECT count(*) FROM _row_history WHERE row_id = ?1) FROM _row_history WHERE table_name = 'hist' AND row_id = ?1 ORDER BY version DESC LIMIT 1`, id).Scan(&op, &data, &n); err != nil {
			t.Fatal(err)
		}
		if op != "update" || data != `{"body":"v3","title":"third"}` || n != 3+5 {
			t.Fatalf("last history entry %s %s of %d", op, data, n)
		}
	}},
	{"history_none_before_first", func(t *testing.T, e *replayEnv) {
		id := e.ids["hist"]
		e.fails(t, "row_restore", map[string]any{"table": "hist", "id": id, "at_unix_secs": histT0 - 1}, "row not found: "+id)
		e.fails(t, "row_restore", map[string]any{"table": "hist", "id": uuid4(t), "at_unix_secs": time.Now().Unix()}, "row not found: ")
		// row_restore does not resolve prefixes.
		e.fails(t, "row_restore", map[string]any{"table": "hist", "id": id[:8], "at_unix_secs": time.Now().Unix()}, "row not found: "+id[:8])
	}},
	{"history_delete_restore", func(t *testing.T, e *replayEnv) {
		rec := checkRecord(t, e.ok(t, "create", map[string]any{"table": "hist", "data": map[string]any{"title": "gone", "body": "soon"}}))
		id := rec["id"].(string)
		e.created = append(e.created, id)
		// delete answers the id as passed, a prefix too.
		jsonEq(t, "delete by prefix", e.ok(t, "delete", map[string]any{"table": "hist", "id": id[:13]}), `{"deleted":"`+id[:13]+`"}`)
		e.fails(t, "get", map[string]any{"table": "hist", "id": id}, "row not found")
		back := checkRecord(t, e.ok(t, "row_restore", map[string]any{"table": "hist", "id": id, "at_unix_secs": time.Now().Unix() + 5}))
		if back["id"] != id || !reflect.DeepEqual(back["data"], map[string]any{"title": "gone", "body": "soon"}) || back["created_at"] != back["updated_at"] {
			t.Fatalf("restore: %v", back)
		}
		if got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "hist", "id": id})); !reflect.DeepEqual(got, back) {
			t.Fatalf("get after restore %v", got)
		}
		if ops := historyOps(t, plainDB(t, e.user, "hist"), id); ops != "create,delete,create" {
			t.Fatalf("history %s", ops)
		}
	}},

	{"history_numbering_after_archive", func(t *testing.T, e *replayEnv) {
		// A row whose versions 1–10 mini-app-mcp rolled into the archive:
		// the next entry is version 12, after the raw version 11.
		db := plainDB(t, e.user, "hist")
		id := plainRow(t, db, "hist", seedEntry{at: histT0 + 300, op: "update", data: `{"body":"raw","title":"archived"}`})
		if _, err := db.Exec(`UPDATE _row_history SET version = 11 WHERE row_id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO _row_history_archive (table_name, row_id, version_start, version_end, recorded_start, recorded_end, entry_count, blob) VALUES ('hist', ?, 1, 10, ?, ?, 10, x'00')`,
			id, histT0, histT0+290); err != nil {
			t.Fatal(err)
		}
		e.ok(t, "update", map[string]any{"table": "hist", "id": id, "data": map[string]any{"body": "next"}})
		var v int
		var op, data string
		if err := db.QueryRow(`SELECT version, op, data_json FROM _row_history WHERE row_id = ? ORDER BY version DESC LIMIT 1`, id).Scan(&v, &op, &data); err != nil ||
			v != 12 || op != "update" || data != `{"body":"next","title":"archived"}` {
			t.Fatalf("entry after the archive: %d %s %s %v", v, op, data, err)
		}
		rec := checkRecord(t, e.ok(t, "row_restore", map[string]any{"table": "hist", "id": id, "at_unix_secs": histT0 + 301}))
		if rec["data"].(map[string]any)["body"] != "raw" {
			t.Fatalf("restore of the raw entry: %v", rec)
		}
	}},
	{"history_purge", func(t *testing.T, e *replayEnv) {
		// The default policy (keep 16, chunk 48): a row with 64 raw
		// entries gets its 65th from an update, which rolls the oldest 49
		// into one archive blob; a restore to a time only the archive
		// covers reads it.
		db := plainDB(t, e.user, "hist")
		hist := make([]seedEntry, 64)
		for i := range hist {
			op := "update"
			if i == 0 {
				op = "create"
			}
			hist[i] = seedEntry{at: histT0 + 1000 + int64(i)*10, op: op, data: fmt.Sprintf(`{"body":"v%d","title":"purge"}`, i+1)}
		}
		id := plainRow(t, db, "hist", hist...)
		e.ok(t, "update", map[string]any{"table": "hist", "id": id, "data": map[string]any{"body": "v65"}})
		var raw, minRaw, maxRaw int
		if err := db.QueryRow(`SELECT count(*), min(version), max(version) FROM _row_history WHERE row_id = ?`, id).Scan(&raw, &minRaw, &maxRaw); err != nil ||
			raw != 16 || minRaw != 50 || maxRaw != 65 {
			t.Fatalf("raw entries after the roll: %d (versions %d..%d) %v", raw, minRaw, maxRaw, err)
		}
		var vs, ve, n int
		var format string
		var blob []byte
		if err := db.QueryRow(`SELECT version_start, version_end, entry_count, format, blob FROM _row_history_archive WHERE row_id = ?`, id).Scan(&vs, &ve, &n, &format, &blob); err != nil ||
			vs != 1 || ve != 49 || n != 49 || format != "jsonl-zstd" {
			t.Fatalf("archive %d..%d %d %s %v", vs, ve, n, format, err)
		}
		dec, _ := zstd.NewReader(nil)
		plain, err := dec.DecodeAll(blob, nil)
		if lines := strings.Count(string(plain), "\n"); err != nil || lines != 49 || !strings.Contains(string(plain), `"data_json":"{\"body\":\"v7\",\"title\":\"purge\"}"`) {
			t.Fatalf("archive blob: %d lines, %v", lines, err)
		}
		rec := checkRecord(t, e.ok(t, "row_restore", map[string]any{"table": "hist", "id": id, "at_unix_secs": histT0 + 1000 + 6*10 + 5}))
		if rec["data"].(map[string]any)["body"] != "v7" {
			t.Fatalf("restore from the archive: %v", rec)
		}
	}},
	{"history_off", func(t *testing.T, e *replayEnv) {
		// One table (history: off) is still multi-table mode; list caps
		// limit at 1000.
		work := t.TempDir()
		user := filepath.Join(work, "user")
		db := plainTable(t, user, "quiet", "table: quiet\nhistory: off\nfields:\n  - name: n\n    type: number\n")
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1005; i++ {
			if _, err := tx.Exec(`INSERT INTO rows VALUES (?, ?, ?, ?)`, uuid4(t), fmt.Sprintf(`{"n":%d}`, i), histT0+i, histT0+i); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		c := e.tr.open(t, work, []string{"MINI_APP_USER_DIR=" + user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "none")}, "2025-03-26")
		if text, isErr, rerr := replayCall(t, c, "info", map[string]any{}); !isErr || text != "table argument is required in multi-table mode" || rerr != nil {
			t.Fatalf("info without table, one table: %v %q %v", isErr, text, rerr)
		}
		var rs []map[string]any
		if err := json.Unmarshal([]byte(replayMust(t, c, "list", map[string]any{"table": "quiet", "limit": 5000})), &rs); err != nil || len(rs) != 1000 || rs[0]["created_at"] != float64(histT0+1004) {
			t.Fatalf("list limit 5000: %d rows %v", len(rs), err)
		}
		if err := json.Unmarshal([]byte(replayMust(t, c, "list", map[string]any{"table": "quiet"})), &rs); err != nil || len(rs) != 100 {
			t.Fatalf("list default limit: %d rows %v", len(rs), err)
		}
		rec := checkRecord(t, replayMust(t, c, "create", map[string]any{"table": "quiet", "data": map[string]any{"n": -1}}))
		replayMust(t, c, "update", map[string]any{"table": "quiet", "id": rec["id"], "data": map[string]any{"n": -2}})
		if text, isErr, _ := replayCall(t, c, "row_restore", map[string]any{"table": "quiet", "id": rec["id"], "at_unix_secs": time.Now().Unix() + 5}); !isErr || text != "row not found: "+rec["id"].(string) {
			t.Fatalf("row_restore with history off: %v %q", isErr, text)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM _row_history`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("history off: %d entries %v", n, err)
		}
	}},
	{"argument_errors", func(t *testing.T, e *replayEnv) {
		// A missing required key or a wrong JSON type is the JSON-RPC error
		// -32602 (invalid params), as upstream answers; unknown keys are
		// ignored.
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"get", map[string]any{"table": "emo"}, "missing field `id`"},
			{"content_view", map[string]any{"table": "notes", "id": e.ids["view"]}, "missing field `field`"},
			{"info", map[string]any{"table": 1}, "invalid params"},
			{"list", map[string]any{"table": "emo", "limit": "ten"}, "invalid params"},
		} {
			text, isErr, rerr := e.call(t, c.tool, c.args)
			if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, c.want) {
				t.Errorf("%s %v: %v %q %v, want a JSON-RPC error %q", c.tool, c.args, isErr, text, rerr, c.want)
			}
		}
		if text := e.ok(t, "info", map[string]any{"table": "emo", "bogus": true}); !strings.Contains(text, `"table": "emo"`) {
			t.Fatalf("info with an unknown key: %s", text)
		}
	}},

	// Server behaviours.
	{"update_merge", func(t *testing.T, e *replayEnv) {
		rec := checkRecord(t, e.ok(t, "create", map[string]any{"table": "prefs", "data": map[string]any{"name": "ann", "nick": "a", "score": 1, "meta": map[string]any{"x": 1, "y": 2}}}))
		id := rec["id"].(string)
		e.ids["prefs"] = id
		merge := func(data map[string]any) map[string]any {
			t.Helper()
			return checkRecord(t, e.ok(t, "update", map[string]any{"table": "prefs", "id": id, "data": data}))["data"].(map[string]any)
		}
		if d := merge(map[string]any{"score": 2}); !reflect.DeepEqual(d, map[string]any{"name": "ann", "nick": "a", "score": float64(2), "meta": map[string]any{"x": float64(1), "y": float64(2)}}) {
			t.Fatalf("absent keys kept: %v", d)
		}
		if d := merge(map[string]any{"nick": nil}); len(d) != 3 || d["nick"] != nil {
			t.Fatalf("null deletes an optional field: %v", d)
		}
		e.fails(t, "update", map[string]any{"table": "prefs", "id": id, "data": map[string]any{"name": nil}}, "required field cannot be deleted via null")
		e.fails(t, "update", map[string]any{"table": "prefs", "id": id, "data": map[string]any{"score": "high"}}, "validation error on field 'score': expected type 'number', got 'string'")
		if d := merge(map[string]any{"meta": map[string]any{"z": 3}}); !reflect.DeepEqual(d["meta"], map[string]any{"z": float64(3)}) {
			t.Fatalf("nested object replaced: %v", d)
		}
		e.fails(t, "update", map[string]any{"table": "prefs", "id": "ffffffff", "data": map[string]any{"score": 1}}, "row not found: ffffffff")
	}},
	{"update_replace", func(t *testing.T, e *replayEnv) {
		id := e.ids["prefs"]
		text := e.ok(t, "update", map[string]any{"table": "prefs", "id": id, "mode": "replace", "data": map[string]any{"name": "bob", "score": 7}})
		if !strings.Contains(text, `"data":{"name":"bob","score":7}`) {
			t.Fatalf("replace: %s", text)
		}
		e.fails(t, "update", map[string]any{"table": "prefs", "id": id, "mode": "replace", "data": map[string]any{"score": 7}}, "validation error on field 'name': required field missing")
		var data string
		if err := plainDB(t, e.user, "prefs").QueryRow(`SELECT data FROM rows WHERE id = ?`, id).Scan(&data); err != nil || data != `{"name":"bob","score":7}` {
			t.Fatalf("stored %q %v", data, err)
		}
	}},
	// Stored JSON exactly as given (contract §2 key order and number
	// shape, §5 unknown keys and explicit nulls): the arguments are sent as
	// raw JSON text, and each answer's data is compared as text.
	{"create keeps unknown keys", func(t *testing.T, e *replayEnv) {
		const want = `{"extra":{"a":[1,2.5],"b":1},"name":"u","zz":true}`
		rec := e.rawOK(t, "create", `{"table":"prefs","data":{"zz":true,"name":"u","extra":{"b":1,"a":[1,2.50]}}}`)
		id := rec.id(t)
		e.ids["doc_u"] = id
		rec.data(t, want)
		e.rawOK(t, "get", `{"table":"prefs","id":"`+id+`"}`).data(t, want)
		e.storedData(t, "prefs", id, want)
		rows := e.rawRows(t, "list", `{"table":"prefs","filter":{"type":"eq","field":"name","value":"u"}}`)
		if len(rows) != 1 {
			t.Fatalf("list: %d rows", len(rows))
		}
		rows[0].data(t, want)
		// A listed field selection answers the fields, keys included or not.
		e.rawOK(t, "get", `{"table":"prefs","id":"`+id+`","fields":{"mode":"list","fields":["name","nick"]}}`).data(t, `{"name":"u","nick":null}`)
	}},
	{"create keeps keys named id, created_at and updated_at in data", func(t *testing.T, e *replayEnv) {
		const want = `{"created_at":"then","id":"mine","name":"k","updated_at":null}`
		rec := e.rawOK(t, "create", `{"table":"prefs","data":{"name":"k","id":"mine","created_at":"then","updated_at":null}}`)
		id := rec.id(t)
		rec.data(t, want)
		e.rawOK(t, "get", `{"table":"prefs","id":"`+id+`"}`).data(t, want)
		e.storedData(t, "prefs", id, want)
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","data":{"id":"other"}}`).data(t, `{"created_at":"then","id":"other","name":"k","updated_at":null}`)
		e.ok(t, "delete", map[string]any{"table": "prefs", "id": id})
	}},
	{"create keeps explicit null", func(t *testing.T, e *replayEnv) {
		const want = `{"meta":null,"name":"n","nick":null}`
		rec := e.rawOK(t, "create", `{"table":"prefs","data":{"name":"n","nick":null,"meta":null}}`)
		e.ids["doc_n"] = rec.id(t)
		rec.data(t, want)
		e.rawOK(t, "get", `{"table":"prefs","id":"`+e.ids["doc_n"]+`"}`).data(t, want)
		e.storedData(t, "prefs", e.ids["doc_n"], want)
	}},
	{"float 5.0 round-trips", func(t *testing.T, e *replayEnv) {
		const want = `{"big":12345678901234567890,"meta":{"f":5.0,"i":5,"neg":-9223372036854775808},"name":"f","score":5.0}`
		rec := e.rawOK(t, "create", `{"table":"prefs","data":{"name":"f","score":5.0,"big":12345678901234567890,"meta":{"i":5,"f":5.0,"neg":-9223372036854775808}}}`)
		e.ids["doc_f"] = rec.id(t)
		rec.data(t, want)
		e.rawOK(t, "get", `{"table":"prefs","id":"`+e.ids["doc_f"]+`"}`).data(t, want)
		e.storedData(t, "prefs", e.ids["doc_f"], want)
		// 5 stays an integer.
		rec = e.rawOK(t, "create", `{"table":"prefs","data":{"name":"i","score":5}}`)
		e.ids["doc_i"] = rec.id(t)
		rec.data(t, `{"name":"i","score":5}`)
	}},
	{"merge update keeps unknown keys", func(t *testing.T, e *replayEnv) {
		id := e.ids["doc_u"]
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","data":{"score":6.0,"nick":null}}`).
			data(t, `{"extra":{"a":[1,2.5],"b":1},"name":"u","score":6.0,"zz":true}`)
		// null removes an unknown key too; a new one is added.
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","data":{"zz":null,"added":[null,1.0]}}`).
			data(t, `{"added":[null,1.0],"extra":{"a":[1,2.5],"b":1},"name":"u","score":6.0}`)
		e.storedData(t, "prefs", id, `{"added":[null,1.0],"extra":{"a":[1,2.5],"b":1},"name":"u","score":6.0}`)
		// A patch of unknown keys only is a write too.
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","data":{"rank":2}}`)
	}},
	{"replace update stores data as given", func(t *testing.T, e *replayEnv) {
		id := e.ids["doc_n"]
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","mode":"replace","data":{"name":"n2","other":null,"rank":1}}`).
			data(t, `{"name":"n2","other":null,"rank":1}`)
		e.storedData(t, "prefs", id, `{"name":"n2","other":null,"rank":1}`)
	}},
	{"order_by any key with asc and desc", func(t *testing.T, e *replayEnv) {
		// upstream orders by json_extract of any key: rank is no field.
		filter := `{"type":"in","field":"name","values":["u","n2"]}`
		for _, c := range []struct{ dir, first string }{{"asc", "n2"}, {"desc", "u"}} {
			rows := e.rawRows(t, "list", `{"table":"prefs","filter":`+filter+`,"order_by":[{"field":"rank","direction":"`+c.dir+`"}]}`)
			var first struct{ Name string }
			if len(rows) != 2 || json.Unmarshal(rows[0]["data"], &first) != nil || first.Name != c.first {
				t.Fatalf("order_by rank %s: %v", c.dir, rows)
			}
		}
	}},
	{"order_by without direction is invalid params", func(t *testing.T, e *replayEnv) {
		for _, c := range []struct{ order, want string }{
			{`[{"field":"name"}]`, "missing field `direction`"},
			{`[{"direction":"asc"}]`, "missing field `field`"},
			{`[{"field":"name","direction":"up"}]`, "unknown variant `up`, expected `asc` or `desc`"},
		} {
			text, isErr, rerr := e.rawCall(t, "list", `{"table":"prefs","order_by":`+c.order+`}`)
			if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, c.want) {
				t.Errorf("order_by %s: %v %q %v, want -32602 %q", c.order, isErr, text, rerr, c.want)
			}
		}
	}},
	{"row_restore keeps the stored document", func(t *testing.T, e *replayEnv) {
		id := e.ids["doc_f"]
		const want = `{"big":12345678901234567890,"meta":{"f":5.0,"i":5,"neg":-9223372036854775808},"name":"f","score":5.0}`
		e.ok(t, "delete", map[string]any{"table": "prefs", "id": id})
		e.rawOK(t, "row_restore", fmt.Sprintf(`{"table":"prefs","id":"%s","at_unix_secs":%d}`, id, time.Now().Unix()+5)).data(t, want)
		e.storedData(t, "prefs", id, want)
		var hist string
		if err := plainDB(t, e.user, "prefs").QueryRow(`SELECT data_json FROM _row_history WHERE row_id = ? ORDER BY version DESC LIMIT 1`, id).Scan(&hist); err != nil || hist != want {
			t.Fatalf("history entry %q %v", hist, err)
		}
		// Restoring over a live row replaces it with the entry as stored.
		e.rawOK(t, "update", `{"table":"prefs","id":"`+id+`","data":{"score":1}}`)
		e.rawOK(t, "row_restore", fmt.Sprintf(`{"table":"prefs","id":"%s","at_unix_secs":%d}`, e.ids["doc_u"], time.Now().Unix()+5))
		for _, k := range []string{"doc_u", "doc_n", "doc_f", "doc_i"} {
			e.ok(t, "delete", map[string]any{"table": "prefs", "id": e.ids[k]})
		}
	}},
	{"projection", func(t *testing.T, e *replayEnv) {
		sel := map[string]any{"mode": "list", "fields": []any{"text"}}
		got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "emo", "id": e.ids["emo0"], "fields": sel}))
		if !reflect.DeepEqual(got["data"], map[string]any{"text": "hello"}) {
			t.Fatalf("get projected: %v", got)
		}
		for _, r := range e.okRows(t, "list", map[string]any{"table": "emo", "fields": sel}) {
			if d := r["data"].(map[string]any); len(d) != 1 || r["created_at"] == nil {
				t.Fatalf("list projected: %v", r)
			}
		}
		// A listed field the row lacks comes back null.
		p := checkRecord(t, e.ok(t, "get", map[string]any{"table": "prefs", "id": e.ids["prefs"], "fields": map[string]any{"mode": "list", "fields": []any{"name", "nick"}}}))
		if !reflect.DeepEqual(p["data"], map[string]any{"name": "bob", "nick": nil}) {
			t.Fatalf("missing listed field: %v", p)
		}
		if got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "emo", "id": e.ids["emo0"], "fields": map[string]any{"mode": "all"}})); len(got["data"].(map[string]any)) != 2 {
			t.Fatalf("mode all: %v", got)
		}
		bad := map[string]any{"mode": "list", "fields": []any{"nope"}}
		e.fails(t, "get", map[string]any{"table": "emo", "id": e.ids["emo0"], "fields": bad}, "allowed in field projection")
		e.fails(t, "list", map[string]any{"table": "emo", "fields": bad}, "allowed in field projection")
		e.fails(t, "alias_run", map[string]any{"name": "full", "fields": bad}, "allowed in field projection")
		// Filters: only schema fields.
		e.fails(t, "list", map[string]any{"table": "emo", "filter": map[string]any{"type": "eq", "field": "nope", "value": "x"}},
			"validation error on field 'nope': unknown field 'nope' — only schema-registered fields are allowed in filter")
		rs := e.okRows(t, "list", map[string]any{"table": "emo", "filter": map[string]any{"type": "array_contains", "field": "tags", "value": "y"},
			"order_by": []any{map[string]any{"field": "text", "direction": "asc"}}})
		if len(rs) != 2 || rs[0]["data"].(map[string]any)["text"] != "again" || rs[1]["data"].(map[string]any)["text"] != "world" {
			t.Fatalf("array_contains ordered: %v", rs)
		}
	}},
	{"multi_table_errors", func(t *testing.T, e *replayEnv) {
		for _, tool := range []string{"info", "list", "create", "get"} {
			text := e.fails(t, tool, map[string]any{"id": e.ids["emo0"], "data": map[string]any{"text": "x"}}, "table argument is required in multi-table mode")
			if text != "table argument is required in multi-table mode" {
				t.Fatalf("%s: %q", tool, text)
			}
			if text := e.fails(t, tool, map[string]any{"table": "nope", "id": e.ids["emo0"], "data": map[string]any{"text": "x"}}, "table not found: nope"); text != "table not found: nope" {
				t.Fatalf("%s: %q", tool, text)
			}
		}
	}},
	{"info", func(t *testing.T, e *replayEnv) {
		text := e.ok(t, "info", map[string]any{"table": "emo"})
		if !strings.Contains(text, "\n  \"table\": \"emo\"") {
			t.Fatalf("info is not pretty-printed: %s", text)
		}
		jsonEq(t, "info", text, `{"table":"emo","title":"Emotions","description":"Short feelings with tags.","fields":[`+
			`{"name":"text","type":"string","required":true,"description":"The feeling."},{"name":"tags","type":"array","required":false,"description":null}],"dump":null,"history":"full"}`)
		jsonEq(t, "info agg_one", e.ok(t, "info", map[string]any{"table": "agg_one"}), `{"table":"agg_one","title":null,"description":null,"fields":[`+
			`{"name":"tag","type":"string","required":false,"description":null},{"name":"amount","type":"number","required":false,"description":null}],"dump":null,"history":"full"}`)
	}},
	{"resources", func(t *testing.T, e *replayEnv) {
		names := replayResources(t, e.c)
		if len(names) != 3*len(replayTables)+5 {
			t.Fatalf("resources of %d tables: %d %v", len(replayTables), len(names), names)
		}
		// A user dir with 2 tables: 11 resources.
		work := t.TempDir()
		user := filepath.Join(work, "user")
		plainTable(t, user, "emo", replayEmoYAML)
		plainTable(t, user, "notes", replayNotesYAML)
		two := e.tr.open(t, work, []string{"MINI_APP_USER_DIR=" + user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "none")}, "2025-03-26")
		names = replayResources(t, two)
		want := []string{"Docs: errors", "Docs: filters", "Docs: order-by", "Docs: quickstart", "Docs: tools",
			"JSON Schema (emo)", "JSON Schema (notes)", "Schema JSON (emo)", "Schema JSON (notes)", "Schema YAML (emo)", "Schema YAML (notes)"}
		if len(names) != 11 {
			t.Fatalf("2 tables: %d resources %v", len(names), names)
		}
		sort.Strings(names)
		if !reflect.DeepEqual(names, want) {
			t.Errorf("resource names %v, want %v", names, want)
		}
		read := func(c replayConn, uri string) (map[string]any, *rpcError) {
			raw, rerr := c.rpc(t, "resources/read", map[string]any{"uri": uri})
			if rerr != nil {
				return nil, rerr
			}
			var res struct {
				Contents []map[string]any `json:"contents"`
			}
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) != 1 {
				t.Fatalf("resources/read %s: %s", uri, raw)
			}
			return res.Contents[0], nil
		}
		y, rerr := read(e.c, "schema://yaml?table=emo")
		if rerr != nil || y["text"] != replayEmoYAML || y["mimeType"] != "application/yaml" {
			t.Fatalf("schema://yaml: %v %v", y, rerr)
		}
		j, rerr := read(e.c, "schema://json?table=emo")
		if rerr != nil || j["uri"] != "schema://json?table=emo" || j["mimeType"] != "application/json" {
			t.Fatalf("schema://json: %v %v", j, rerr)
		}
		jsonEq(t, "schema://json", j["text"].(string), e.ok(t, "info", map[string]any{"table": "emo"}))
		js, rerr := read(e.c, "schema://json-schema?table=emo")
		if rerr != nil || js["mimeType"] != "application/schema+json" {
			t.Fatalf("schema://json-schema: %v %v", js, rerr)
		}
		jsonEq(t, "json-schema", js["text"].(string), `{"$schema":"http://json-schema.org/draft-07/schema#","title":"emo","type":"object",`+
			`"properties":{"text":{"type":"string"},"tags":{"type":"array"}},"required":["text"],"additionalProperties":true}`)
		// The quickstart documents mode detection, as upstream's does.
		if d, rerr := read(e.c, "docs://quickstart"); rerr != nil || d["mimeType"] != "text/markdown" || !strings.Contains(d["text"].(string), "TABLE_REQUIRED") ||
			!strings.Contains(d["text"].(string), "multi-table mode") || !strings.Contains(d["text"].(string), "legacy single-table mode") {
			t.Fatalf("docs://quickstart: %v %v", d, rerr)
		}
		// table is found among several query parameters.
		if j, rerr := read(e.c, "schema://json?format=pretty&table=emo&v=2"); rerr != nil || j["mimeType"] != "application/json" || !strings.Contains(j["text"].(string), `"table": "emo"`) {
			t.Fatalf("schema://json with several parameters: %v %v", j, rerr)
		}
		// A failed read is -32603 with upstream's data {code, message, …}.
		for _, uri := range []string{"schema://json", "schema://yaml"} {
			if _, rerr := read(e.c, uri); rerr == nil || rerr.Code != -32603 || rerr.Message != "table argument is required in multi-table mode" {
				t.Fatalf("%s without table in multi mode: %v", uri, rerr)
			} else {
				jsonEq(t, uri+" data", string(rerr.Data), `{"code":"TABLE_REQUIRED","message":"table argument is required in multi-table mode"}`)
			}
		}
		if _, rerr := read(e.c, "schema://json?table=nope"); rerr == nil || rerr.Code != -32603 || rerr.Message != "table not found: nope" {
			t.Fatalf("schema://json of an unknown table: %v", rerr)
		} else {
			jsonEq(t, "unknown table data", string(rerr.Data), `{"code":"TABLE_NOT_FOUND","message":"table not found: nope","table":"nope"}`)
		}
		if _, rerr := read(e.c, "nope://x"); rerr == nil || rerr.Code != -32002 {
			t.Fatalf("unknown URI: %v", rerr)
		}
	}},
	{"reload", func(t *testing.T, e *replayEnv) {
		jsonEq(t, "reload unchanged", e.ok(t, "reload", nil), fmt.Sprintf(`{"mounted":%d,"added":[],"removed":[]}`, len(replayTables)))
		// Tables written by plain files while the server runs.
		db := plainTable(t, e.user, "later", "table: later\nfields:\n  - name: n\n    type: number\n    required: true\n")
		seeded := plainRow(t, db, "later", seedEntry{at: time.Now().Unix(), op: "create", data: `{"n":41}`})
		plainTable(t, e.user, "also", "table: also\nfields:\n  - name: s\n    type: string\n")
		jsonEq(t, "reload added", e.ok(t, "reload", map[string]any{}), fmt.Sprintf(`{"mounted":%d,"added":["also","later"],"removed":[]}`, len(replayTables)+2))
		if got := checkRecord(t, e.ok(t, "get", map[string]any{"table": "later", "id": seeded})); got["data"].(map[string]any)["n"] != float64(41) {
			t.Fatalf("seeded row of the new table: %v", got)
		}
		if rec := checkRecord(t, e.ok(t, "create", map[string]any{"table": "later", "data": map[string]any{"n": 42}})); rec["data"].(map[string]any)["n"] != float64(42) {
			t.Fatalf("create in the new table: %v", rec)
		}
		if names := replayResources(t, e.c); len(names) != 3*(len(replayTables)+2)+5 {
			t.Fatalf("resources after reload: %d", len(names))
		}
		// Removing a yaml unmounts its table; the db file stays.
		for _, n := range []string{"also", "later"} {
			if err := os.Remove(filepath.Join(e.user, n, "schema.yaml")); err != nil {
				t.Fatal(err)
			}
		}
		jsonEq(t, "reload removed", e.ok(t, "reload", map[string]any{}), fmt.Sprintf(`{"mounted":%d,"added":[],"removed":["also","later"]}`, len(replayTables)))
		e.fails(t, "list", map[string]any{"table": "later"}, "table not found: later")
		if _, err := os.Stat(filepath.Join(e.user, "later", "later.db")); err != nil {
			t.Fatalf("db of the removed table: %v", err)
		}
	}},
	{"legacy_pair", func(t *testing.T, e *replayEnv) {
		work := t.TempDir()
		plainTable(t, work, "diary", "table: diary\ntitle: Diary\nfields:\n  - name: text\n    type: string\n    required: true\n")
		env := []string{"MINI_APP_USER_DIR=" + filepath.Join(work, "empty-user"), "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "none"),
			"MINI_APP_SCHEMA=" + filepath.Join(work, "diary", "schema.yaml"), "MINI_APP_DB=" + filepath.Join(work, "diary", "diary.db")}
		c := e.tr.open(t, work, env, "2024-11-05")
		if text := replayMust(t, c, "info", map[string]any{}); !strings.Contains(text, `"title": "Diary"`) {
			t.Fatalf("legacy info without table: %s", text)
		}
		rec := checkRecord(t, replayMust(t, c, "create", map[string]any{"data": map[string]any{"text": "dear diary"}}))
		if got := checkRecord(t, replayMust(t, c, "get", map[string]any{"id": rec["id"]})); got["id"] != rec["id"] {
			t.Fatalf("legacy get: %v", got)
		}
		if names := replayResources(t, c); len(names) != 8 {
			t.Fatalf("legacy resources: %d %v", len(names), names)
		}
		raw, rerr := c.rpc(t, "resources/read", map[string]any{"uri": "schema://yaml"})
		if rerr != nil || !strings.Contains(string(raw), "Diary") {
			t.Fatalf("legacy schema://yaml without table: %s %v", raw, rerr)
		}
		var data string
		if err := plainDB(t, work, "diary").QueryRow(`SELECT data FROM rows WHERE id = ?`, rec["id"]).Scan(&data); err != nil || data != `{"text":"dear diary"}` {
			t.Fatalf("legacy row %q %v", data, err)
		}
		// The legacy pair's snapshots go next to its schema.yaml (the
		// scope root of a legacy table is the yaml's parent, not its
		// grandparent: the upstream bug the contract notes).
		var snap struct {
			Snapshotted []struct {
				Table, Scope string
				Path         string `json:"snapshot_path"`
			}
		}
		if err := json.Unmarshal([]byte(replayMust(t, c, "data_snapshot", map[string]any{"table": "diary"})), &snap); err != nil || len(snap.Snapshotted) != 1 {
			t.Fatalf("legacy snapshot: %+v %v", snap, err)
		}
		got := snap.Snapshotted[0]
		if got.Scope != "unknown" || filepath.Dir(got.Path) != filepath.Join(work, "diary", "_snapshots") || !strings.HasPrefix(filepath.Base(got.Path), "diary.") {
			t.Fatalf("legacy snapshot at %s (scope %s), want under %s", got.Path, got.Scope, filepath.Join(work, "diary", "_snapshots"))
		}
		var n int
		if err := plainDBFile(t, got.Path).QueryRow(`SELECT count(*) FROM rows`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("legacy snapshot rows: %d %v", n, err)
		}
	}},
	// After the writes, the files are still in the contract's layout.
	// ListFilter::validate's refusals, word for word.
	{"filter_validate_texts", func(t *testing.T, e *replayEnv) {
		for _, c := range []struct {
			filter map[string]any
			want   string
		}{
			{map[string]any{"type": "eq", "field": "text", "value": 5}, "validation error on field 'text': filter value for field 'text' has type mismatch: expected string, got number"},
			{map[string]any{"type": "eq", "field": "text", "value": nil}, "validation error on field 'text': filter value for field 'text' must not be null"},
			{map[string]any{"type": "in", "field": "text", "values": []any{}}, "validation error on field 'text': In.values must not be empty"},
			{map[string]any{"type": "or", "filters": []any{}}, "validation error on field 'filters': Or.filters must not be empty"},
			{map[string]any{"type": "and", "filters": []any{}}, "validation error on field 'filters': And.filters must not be empty"},
			{map[string]any{"type": "like", "field": "tags", "pattern": "%"}, "validation error on field 'tags': like filter is only supported on string fields, but field 'tags' has type array"},
		} {
			if text := e.fails(t, "list", map[string]any{"table": "emo", "filter": c.filter}, c.want); text != c.want {
				t.Errorf("filter %v: %q, want %q", c.filter, text, c.want)
			}
		}
	}},
	// schema_create / schema_update / schema_delete with their dry runs
	// (schema_tools.rs), on a table created live.
	{"schema_tools_lifecycle", func(t *testing.T, e *replayEnv) {
		fields := []any{map[string]any{"name": "title", "type": "string", "required": true}}
		yaml := filepath.Join(e.user, "lc", "schema.yaml")
		jsonEq(t, "schema_create dry_run", e.ok(t, "schema_create", map[string]any{"table": "lc", "scope": "user", "fields": fields, "dry_run": true}),
			`{"dry_run":true,"affects":{"would_create":"`+yaml+`","already_exists":false}}`)
		jsonEq(t, "schema_create", e.ok(t, "schema_create", map[string]any{"table": "lc", "scope": "user", "fields": fields, "title": "Lifecycle"}),
			`{"created":"lc","schema_path":"`+yaml+`","scope":"user"}`)
		e.fails(t, "schema_create", map[string]any{"table": "lc", "scope": "user", "fields": fields}, "schema already exists: lc")
		checkRecord(t, e.ok(t, "create", map[string]any{"table": "lc", "data": map[string]any{"title": "one"}}))
		// Upstream creates the table's file with its tables at once: a
		// query op on it runs.
		batch := e.okObj(t, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "lc", "sql": "SELECT count(*) FROM rows"}}})
		if batch["committed"] != true || batch["ops_executed"] != float64(1) {
			t.Fatalf("schema_batch query: %v", batch)
		}
		more := append(fields, map[string]any{"name": "n", "type": "number"})
		jsonEq(t, "schema_update dry_run", e.ok(t, "schema_update", map[string]any{"table": "lc", "scope": "user", "fields": more, "dry_run": true}),
			`{"dry_run":true,"affects":{"fields_added":["n"],"fields_removed":[],"fields_type_changed":[],"rows_unchanged":1}}`)
		jsonEq(t, "schema_update", e.ok(t, "schema_update", map[string]any{"table": "lc", "scope": "user", "fields": more}),
			`{"updated":"lc","schema_path":"`+yaml+`","scope":"user","fields_added":["n"],"fields_removed":[],"fields_type_changed":[]}`)
		if text := e.ok(t, "info", map[string]any{"table": "lc"}); !strings.Contains(text, `"name": "n"`) {
			t.Fatalf("info after schema_update: %s", text)
		}
		del := e.okObj(t, "schema_delete", map[string]any{"table": "lc", "scope": "user", "dry_run": true})
		if del["dry_run"] != true || !reflect.DeepEqual(del["affects"], map[string]any{"rows_orphaned": float64(1), "would_remove_yaml": yaml,
			"db_file_retained": filepath.Join(e.user, "lc", "lc.db")}) {
			t.Fatalf("schema_delete dry_run: %v", del)
		}
		jsonEq(t, "schema_delete", e.ok(t, "schema_delete", map[string]any{"table": "lc", "scope": "user"}),
			`{"deleted":"lc","schema_path_removed":"`+yaml+`","db_file_retained":"`+filepath.Join(e.user, "lc", "lc.db")+`","scope":"user"}`)
		e.fails(t, "info", map[string]any{"table": "lc"}, "table not found: lc")
		if _, err := os.Stat(filepath.Join(e.user, "lc", "lc.db")); err != nil {
			t.Fatalf("schema_delete keeps the db: %v", err)
		}
	}},
	// schema_batch's refusals before any SQL (schema_tools.rs).
	{"schema_batch_rules", func(t *testing.T, e *replayEnv) {
		text := e.fails(t, "schema_batch", map[string]any{"ops": []any{
			map[string]any{"op": "query", "table": "emo", "sql": "SELECT 1"},
			map[string]any{"op": "query", "table": "notes", "sql": "SELECT 1"}}}, "all ops in a batch")
		if text != "validation error on field 'ops': all ops in a batch must target the same table" {
			t.Fatalf("batch across tables: %q", text)
		}
		before := len(e.okRows(t, "list", map[string]any{"table": "emo"}))
		for _, match := range []any{nil, map[string]any{"text": nil}} {
			e.fails(t, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "replace", "table": "emo", "match": match,
				"items": []any{map[string]any{"text": "replaced"}}}}}, "validation error on field 'match")
		}
		if after := len(e.okRows(t, "list", map[string]any{"table": "emo"})); after != before {
			t.Fatalf("a refused replace changed the rows: %d → %d", before, after)
		}
		dry := e.okObj(t, "schema_batch", map[string]any{"dry_run": true, "ops": []any{map[string]any{"op": "query", "table": "emo", "sql": "DELETE FROM rows"}}})
		if dry["committed"] != false || dry["dry_run"] != true || dry["registry_rebuilt"] != false {
			t.Fatalf("schema_batch dry_run: %v", dry)
		}
	}},
	// A table directory holding only schema.yaml: mount creates
	// <table>.db with mini-app-mcp's tables before any call.
	{"mount_creates_db", func(t *testing.T, e *replayEnv) {
		work := t.TempDir()
		user := filepath.Join(work, "user")
		if err := os.MkdirAll(filepath.Join(user, "fresh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(user, "fresh", "schema.yaml"), []byte("table: fresh\nfields:\n  - name: title\n    type: string\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := e.tr.open(t, work, []string{"MINI_APP_USER_DIR=" + user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "none")}, "2025-03-26")
		var names []string
		rows, err := plainDB(t, user, "fresh").Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('rows','_aliases','_row_history','_row_history_archive') ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			_ = rows.Scan(&n)
			names = append(names, n)
		}
		rows.Close()
		if strings.Join(names, ",") != "_aliases,_row_history,_row_history_archive,rows" {
			t.Fatalf("fresh.db after mount has tables %v", names)
		}
		replayMust(t, c, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "fresh", "sql": "SELECT count(*) FROM rows"}}})
	}},
	// row_materialize by id as json, and data_snapshot's dry run
	// (materialize.rs, snapshot.rs).
	{"row_materialize_json", func(t *testing.T, e *replayEnv) {
		dest := filepath.Join(t.TempDir(), "out")
		id := e.ids["emo0"]
		m := e.okObj(t, "row_materialize", map[string]any{"table": "emo", "selector": map[string]any{"type": "by_id", "id": id},
			"fields": map[string]any{"mode": "all"}, "format": "json", "dest": dest})
		files, _ := m["files"].([]any)
		if m["count"] != float64(1) || len(files) != 1 {
			t.Fatalf("row_materialize: %v", m)
		}
		f := files[0].(map[string]any)
		b, err := os.ReadFile(filepath.Join(dest, id+".json"))
		if err != nil || f["path"] != filepath.Join(dest, id+".json") || f["row_id"] != id || f["bytes"] != float64(len(b)) || len(f["sha256"].(string)) != 64 {
			t.Fatalf("row_materialize file %v: %v", f, err)
		}
		jsonEq(t, "materialized row", string(b), `{"text":"hello","tags":["x"]}`)
		e.fails(t, "row_materialize", map[string]any{"table": "emo", "selector": map[string]any{"type": "by_id", "id": id},
			"fields": map[string]any{"mode": "all"}, "format": "json", "dest": "relative/out"}, "materialize dest must be absolute")
	}},
	{"data_snapshot_dry_run", func(t *testing.T, e *replayEnv) {
		n := len(e.okRows(t, "list", map[string]any{"table": "agg_one"}))
		jsonEq(t, "data_snapshot dry_run", e.ok(t, "data_snapshot", map[string]any{"table": "agg_one", "dry_run": true}),
			fmt.Sprintf(`{"dry_run":true,"affects":{"target_tables":["agg_one"],"row_counts":{"agg_one":%d},"would_purge_generations":{"agg_one":0}}}`, n))
	}},
	{"layout_after_writes", func(t *testing.T, e *replayEnv) {
		for _, table := range replayTables {
			db := plainDB(t, e.user, table)
			rows, err := db.Query(`SELECT id, data, typeof(created_at), typeof(updated_at), created_at <= updated_at FROM rows`)
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for rows.Next() {
				var id, data, tc, tu string
				var ordered bool
				if err := rows.Scan(&id, &data, &tc, &tu, &ordered); err != nil {
					t.Fatal(err)
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(data), &v); err != nil || compactJSON(t, v) != data || !uuid4RE.MatchString(id) || tc != "integer" || tu != "integer" || !ordered {
					t.Errorf("%s row %s: data %q, timestamps %s %s", table, id, data, tc, tu)
				}
			}
			rows.Close()
			var bad, total int
			if err := db.QueryRow(`SELECT count(*) FILTER (WHERE op NOT IN ('create','update','delete') OR typeof(recorded_at) != 'integer' OR typeof(version) != 'integer' OR table_name != ?), count(*) FROM _row_history`, table).Scan(&bad, &total); err != nil {
				t.Fatal(err)
			}
			if bad != 0 || total == 0 && table != "prefs" {
				t.Errorf("%s: %d of %d history entries out of the layout", table, bad, total)
			}
			// Every live row's last history entry holds its data.
			var stale int
			if err := db.QueryRow(`SELECT count(*) FROM rows r WHERE r.data IS NOT (SELECT h.data_json FROM _row_history h WHERE h.row_id = r.id ORDER BY h.version DESC LIMIT 1)`).Scan(&stale); err != nil || stale != 0 {
				t.Errorf("%s: %d rows whose last history entry differs (%v)", table, stale, err)
			}
		}
		if ops := historyOps(t, plainDB(t, e.user, "emo"), e.created[0]); ops != "create,update,delete" {
			t.Errorf("emo round trip history %s", ops)
		}
		if ops := historyOps(t, plainDB(t, e.user, "notes"), e.ids["ins"]); ops != "create,update,update,update" {
			t.Errorf("notes insert history %s", ops)
		}
		// Aliases are in the user dir's _global.db.
		db, err := sqlOpen(filepath.Join(e.user, "_global.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		var src string
		if err := db.QueryRow(`SELECT count(*), max(CASE WHEN name = 'multi_count' THEN sources_json END) FROM _global_aliases`).Scan(&n, &src); err != nil || n < 7 {
			t.Fatalf("_global_aliases: %d %v", n, err)
		}
		jsonEq(t, "multi_count sources_json", src, `{"kind":"multi","value":["agg_one","multi_two"]}`)
	}},
}

// replayMust calls a tool on c that must succeed.
func replayMust(t *testing.T, c replayConn, tool string, args map[string]any) string {
	t.Helper()
	text, isErr, rerr := replayCall(t, c, tool, args)
	if rerr != nil || isErr {
		t.Fatalf("%s %v: %v %q %v", tool, args, isErr, text, rerr)
	}
	return text
}

func replayResources(t *testing.T, c replayConn) []string {
	t.Helper()
	raw, rerr := c.rpc(t, "resources/list", map[string]any{})
	if rerr != nil {
		t.Fatalf("resources/list: %v", rerr)
	}
	var res struct {
		Resources []struct {
			URI, Name string
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Resources {
		names = append(names, r.Name)
	}
	return names
}

// replayToolSchemas checks the input schemas and descriptions of the tool
// list as mini-app-mcp publishes them: optional arguments accept null, the
// structured arguments are tagged variants, order_by items need field and
// direction, view_range is two items, and each description names its table
// argument and its error codes.
func replayToolSchemas(t *testing.T, tools map[string]map[string]any) {
	t.Helper()
	prop := func(tool, name string) map[string]any {
		props, _ := tools[tool]["inputSchema"].(map[string]any)["properties"].(map[string]any)
		p, _ := props[name].(map[string]any)
		if p == nil {
			t.Fatalf("%s: no property %s", tool, name)
		}
		return p
	}
	types := func(p map[string]any) []any {
		ts, _ := p["type"].([]any)
		return ts
	}
	// Optional arguments also accept null; required ones do not.
	for _, c := range [][2]string{{"list", "limit"}, {"list", "table"}, {"get", "fields"}, {"update", "mode"}, {"alias_run", "params"}, {"data_snapshot", "scope"}} {
		if !slices.Contains(types(prop(c[0], c[1])), "null") {
			t.Errorf("%s.%s does not accept null: %v", c[0], c[1], prop(c[0], c[1]))
		}
	}
	if prop("get", "id")["type"] != "string" {
		t.Errorf("get.id: %v", prop("get", "id"))
	}
	// Tagged variants: the discriminators of each structured argument.
	consts := func(p map[string]any, key string) []string {
		var out []string
		variants, _ := p["oneOf"].([]any)
		for _, v := range variants {
			vp, _ := v.(map[string]any)["properties"].(map[string]any)
			d, _ := vp[key].(map[string]any)
			if c, ok := d["const"].(string); ok {
				out = append(out, c)
			}
			enum, _ := d["enum"].([]any)
			for _, e := range enum {
				out = append(out, e.(string))
			}
		}
		return out
	}
	defs, _ := tools["list"]["inputSchema"].(map[string]any)["$defs"].(map[string]any)
	lf, _ := defs["ListFilter"].(map[string]any)
	for _, c := range []struct {
		got  []string
		want string
	}{
		{consts(lf, "type"), "eq,in,like,array_contains,array_not_contains,or,and"},
		{consts(prop("get", "fields"), "mode"), "all,list"},
		{consts(prop("query_aggregate", "sources"), "kind"), "single,multi,pattern"},
		{consts(prop("query_aggregate", "aggregator"), "kind"), "count,sum,avg,min,max,group_by"},
		{consts(prop("row_materialize", "selector"), "type"), "by_id,by_filter"},
		{consts(prop("schema_batch", "ops")["items"].(map[string]any), "op"), "query,schema_create,schema_update,schema_delete,replace"},
	} {
		if strings.Join(c.got, ",") != c.want {
			t.Errorf("variants %v, want %s", c.got, c.want)
		}
	}
	if ref := prop("list", "filter")["oneOf"].([]any)[1].(map[string]any)["$ref"]; ref != "#/$defs/ListFilter" {
		t.Errorf("list.filter: %v", prop("list", "filter"))
	}
	for _, tool := range []string{"list", "alias_create", "alias_run"} {
		items, _ := prop(tool, "order_by")["items"].(map[string]any)
		dir, _ := items["properties"].(map[string]any)["direction"].(map[string]any)
		if !reflect.DeepEqual(items["required"], []any{"field", "direction"}) || !reflect.DeepEqual(dir["enum"], []any{"asc", "desc"}) {
			t.Errorf("%s.order_by items: %v", tool, items)
		}
	}
	for _, tool := range []string{"content_view", "content_replace"} {
		if p := prop(tool, "view_range"); p["minItems"] != float64(2) || p["maxItems"] != float64(2) {
			t.Errorf("%s.view_range: %v", tool, p)
		}
	}
	for _, c := range []struct{ tool, want string }{
		{"get", "AMBIGUOUS_ID"}, {"list", "TABLE_REQUIRED"}, {"info", "legacy single-table mode"}, {"alias_run", "ALIAS_NOT_FOUND"},
		{"content_replace", "STRING_NOT_FOUND"}, {"content_insert", "OUT_OF_RANGE"}, {"schema_batch", "BATCH_ABORTED"}, {"create", "table argument"},
	} {
		if d, _ := tools[c.tool]["description"].(string); !strings.Contains(d, c.want) {
			t.Errorf("%s description lacks %q: %s", c.tool, c.want, d)
		}
	}
}

// The file behaviours of mini-app-mcp (dump files, yaml materialize, the
// dump section info shows, dump.sync checked at mount) and its alias
// pattern text, replayed on a directory of their own: a table with a dump
// section and a table whose dump.sync upstream refuses.
func init() {
	replayScenarios = append(replayScenarios,
		replayScenario{"row_materialize yaml bytes as upstream", func(t *testing.T, e *replayEnv) {
			f := filesEnv(t, e)
			id := f.rawOK(t, "create", `{"table":"docs","data":{"title":"Two\nlines","body":"plain","flag":"true","score":5.0,"tags":["a","b"]}}`).id(t)
			dest := filepath.Join(t.TempDir(), "out")
			m := f.okObj(t, "row_materialize", map[string]any{"table": "docs", "selector": map[string]any{"type": "by_id", "id": id},
				"fields": map[string]any{"mode": "all"}, "format": "yaml", "dest": dest})
			// serde_yaml's bytes of a serde_json map: keys sorted, a
			// literal block for the multi-line string, 'true' quoted, 5.0
			// kept, a block list.
			const want = "body: plain\nflag: 'true'\nscore: 5.0\ntags:\n- a\n- b\ntitle: |-\n  Two\n  lines\n"
			const wantSHA = "84403bb375b5edac00df92c6f66aaa355f1a4100ed6522f930cc1abd9b43ce02"
			b, err := os.ReadFile(filepath.Join(dest, id+".yaml"))
			if err != nil || string(b) != want {
				t.Fatalf("materialized yaml %v:\n got %q\nwant %q", err, b, want)
			}
			sum := sha256.Sum256([]byte(want))
			files, _ := m["files"].([]any)
			if len(files) != 1 {
				t.Fatalf("row_materialize: %v", m)
			}
			file := files[0].(map[string]any)
			if file["sha256"] != hex.EncodeToString(sum[:]) || file["sha256"] != wantSHA || file["bytes"] != float64(len(want)) {
				t.Fatalf("row_materialize file %v, want sha256 %s and %d bytes", file, wantSHA, len(want))
			}
		}},
		replayScenario{"dump body trailing newlines trimmed", func(t *testing.T, e *replayEnv) {
			f := filesEnv(t, e)
			for _, c := range []struct{ data, want string }{
				{`{"title":"T","body":"B\n\n\n"}`, "# T\n\nB\n"},
				{`{"title":"Two\nlines","body":"x\r\n"}`, "# Two\nlines\n\nx\r\n"},
				{`{"title":"only"}`, "# only\n\n\n"},
			} {
				id := f.rawOK(t, "create", `{"table":"docs","data":`+c.data+`}`).id(t)
				if b, err := os.ReadFile(filepath.Join(f.work, "dumps", id+".md")); err != nil || string(b) != c.want {
					t.Fatalf("dump of %s %v:\n got %q\nwant %q", c.data, err, b, c.want)
				}
			}
		}},
		replayScenario{"info shows null for unset dump keys", func(t *testing.T, e *replayEnv) {
			f := filesEnv(t, e)
			var info struct {
				Dump json.RawMessage `json:"dump"`
			}
			if err := json.Unmarshal([]byte(f.ok(t, "info", map[string]any{"table": "docs"})), &info); err != nil {
				t.Fatal(err)
			}
			jsonEq(t, "info dump", string(info.Dump), compactJSON(t, map[string]any{"dir": filepath.Join(f.work, "dumps"), "title_field": nil, "body_field": nil, "sync": nil}))
		}},
		replayScenario{"unknown dump.sync skips the table at mount", func(t *testing.T, e *replayEnv) {
			f := filesEnv(t, e)
			f.fails(t, "info", map[string]any{"table": "bad_sync"}, "table not found: bad_sync")
			deadline := time.Now().Add(5 * time.Second)
			for {
				logs := replayLogs(f.c)
				if strings.Contains(logs, "bad_sync") && strings.Contains(logs, "dump.sync: unknown value") && strings.Contains(logs, "both") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no warning naming bad_sync and its dump.sync value in the log:\n%s", logs)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}},
		replayScenario{"alias_run on a pattern matching zero tables", func(t *testing.T, e *replayEnv) {
			e.ok(t, "alias_create", map[string]any{"name": "nomatch", "sources": map[string]any{"kind": "pattern", "value": "nomatch_*"},
				"aggregator": map[string]any{"kind": "count"}, "filter": map[string]any{"type": "eq", "field": "tag", "value": "x"}})
			text, isErr, rerr := e.call(t, "alias_run", map[string]any{"name": "nomatch"})
			if want := "aggregator error: SourceSpec::Pattern('nomatch_*') matched zero tables"; rerr != nil || !isErr || text != want {
				t.Fatalf("alias_run: %v %q %v, want isError %q", isErr, text, rerr, want)
			}
		}},
	)
}

// filesEnv is the replay env of the file behaviours: a user dir holding
// docs (a dump section naming only its dir) and bad_sync (dump.sync:
// both), served by a process of its own on e's transport.
func filesEnv(t *testing.T, e *replayEnv) *replayEnv {
	work := t.TempDir()
	f := &replayEnv{tr: e.tr, work: work, user: filepath.Join(work, "user"), ids: map[string]string{}}
	f.env = []string{"MINI_APP_USER_DIR=" + f.user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "no-project")}
	plainTable(t, f.user, "docs", "table: docs\nfields:\n  - name: title\n    type: string\n  - name: body\n    type: string\n"+
		"  - name: flag\n    type: string\n  - name: score\n    type: number\n  - name: tags\n    type: array\ndump:\n  dir: "+filepath.Join(work, "dumps")+"\n").Close()
	plainTable(t, f.user, "bad_sync", "table: bad_sync\nfields:\n  - name: title\n    type: string\ndump:\n  sync: both\n").Close()
	f.c = e.tr.open(t, work, f.env, "2025-03-26")
	return f
}

// replayLogs is what the process of c logged so far.
func replayLogs(c replayConn) string {
	switch x := c.(type) {
	case *replayStdio:
		return x.stderr.String()
	case *replayHTTP:
		return x.logs.String()
	}
	return ""
}

// query_aggregate as mini-app-mcp computes it, replayed on a directory of
// its own. Upstream (crates/core/src/aggregator.rs) attaches every source
// file to one connection and runs one statement over their rows chained
// with UNION ALL, in source order:
//
//	SELECT json_extract(data, '$.<by_field>') AS group_key, COUNT(*), <inner or COUNT(*)>
//	FROM (SELECT id, data, created_at, updated_at FROM db_0.rows [WHERE …] UNION ALL …)
//	GROUP BY group_key HAVING <ListFilter SQL over data>
//
// so the expected answers follow SQLite: having reads data as a bare
// column, which is the group's first row in that chain (files in source
// order, each in insertion order), or with one min or max aggregate the
// row holding the least or greatest value; array_contains is EXISTS over
// json_each of the field; SUM and AVG over text count it as 0 and answer a
// real (serde_json writes 0.0), MIN and MAX order null < numbers < text
// (an array is its JSON text). The texts are compared byte for byte.
func init() {
	replayScenarios = append(replayScenarios,
		replayScenario{"query_aggregate over upstream's statement", func(t *testing.T, e *replayEnv) {
			a := aggEnv(t, e)
			src := func(names ...string) map[string]any {
				if len(names) == 1 {
					return map[string]any{"kind": "single", "value": names[0]}
				}
				v := make([]any, len(names))
				for i, n := range names {
					v[i] = n
				}
				return map[string]any{"kind": "multi", "value": v}
			}
			scalar := func(kind, field string) map[string]any { return map[string]any{"kind": kind, "field": field} }
			groupBy := func(having map[string]any, inner map[string]any) map[string]any {
				g := map[string]any{"kind": "group_by", "by_field": "tag", "having": having}
				if inner != nil {
					g["inner"] = inner
				}
				return g
			}
			eq := func(f string, v any) map[string]any { return map[string]any{"type": "eq", "field": f, "value": v} }
			check := func(t *testing.T, sources, aggregator map[string]any, want string) {
				t.Helper()
				if got := a.ok(t, "query_aggregate", map[string]any{"sources": sources, "aggregator": aggregator}); got != want {
					t.Fatalf("query_aggregate %v %v:\n got %s\nwant %s", sources, aggregator, got, want)
				}
			}
			t.Run("query_aggregate having on a non-group field", func(t *testing.T) {
				// a's first row holds 4, its second 6; b's only row 5.
				check(t, src("sales"), groupBy(eq("amount", 4), scalar("sum", "amount")), `{"kind":"groups","value":[{"key":"a","count":2,"value":10}]}`)
				check(t, src("sales"), groupBy(eq("amount", 6), scalar("sum", "amount")), `{"kind":"groups","value":[]}`)
			})
			t.Run("having with max tests the row holding the greatest value", func(t *testing.T) {
				check(t, src("sales"), groupBy(eq("amount", 6), scalar("max", "amount")), `{"kind":"groups","value":[{"key":"a","count":2,"value":6}]}`)
				check(t, src("sales"), groupBy(eq("amount", 4), scalar("max", "amount")), `{"kind":"groups","value":[]}`)
			})
			t.Run("having over several sources follows their UNION ALL order", func(t *testing.T) {
				// more first: a's first row is more's (1); sales first: sales' (4).
				check(t, src("more", "sales"), groupBy(eq("amount", 1), scalar("sum", "amount")), `{"kind":"groups","value":[{"key":"a","count":3,"value":11}]}`)
				check(t, src("sales", "more"), groupBy(eq("amount", 1), scalar("sum", "amount")), `{"kind":"groups","value":[]}`)
			})
			t.Run("array_contains and array_not_contains in having", func(t *testing.T) {
				has := func(op string) map[string]any { return map[string]any{"type": op, "field": "labels", "value": "y"} }
				check(t, src("sales"), groupBy(has("array_contains"), nil), `{"kind":"groups","value":[{"key":"b","count":1}]}`)
				check(t, src("sales"), groupBy(has("array_not_contains"), nil), `{"kind":"groups","value":[{"key":"a","count":2}]}`)
				// c's row (from more) has no labels: json_each yields nothing.
				check(t, src("sales", "more"), groupBy(has("array_not_contains"), nil), `{"kind":"groups","value":[{"key":"a","count":3},{"key":"c","count":1}]}`)
			})
			t.Run("sum over a string field counts it as 0", func(t *testing.T) {
				check(t, src("sales"), scalar("sum", "tag"), `{"kind":"value","value":0.0}`)
				check(t, src("sales", "more"), scalar("avg", "tag"), `{"kind":"value","value":0.0}`)
				check(t, src("sales"), groupBy(nil, scalar("sum", "tag")), `{"kind":"groups","value":[{"key":"a","count":2,"value":0.0},{"key":"b","count":1,"value":0.0}]}`)
			})
			t.Run("min and max over non-number fields in SQLite's order", func(t *testing.T) {
				check(t, src("sales"), scalar("min", "tag"), `{"kind":"value","value":"a"}`)
				check(t, src("sales", "more"), scalar("max", "tag"), `{"kind":"value","value":"c"}`)
				check(t, src("sales"), scalar("min", "labels"), `{"kind":"value","value":"[\"x\"]"}`)
			})
		}},
	)
}

// aggEnv is the replay env of the aggregate behaviours: sales and more,
// their rows written in a known order, served by a process of its own on
// e's transport.
func aggEnv(t *testing.T, e *replayEnv) *replayEnv {
	work := t.TempDir()
	a := &replayEnv{tr: e.tr, work: work, user: filepath.Join(work, "user"), ids: map[string]string{}}
	a.env = []string{"MINI_APP_USER_DIR=" + a.user, "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "no-project")}
	at := func(data string) seedEntry { return seedEntry{at: histT0, op: "create", data: data} }
	for name, docs := range map[string][]string{
		"sales": {`{"amount":4,"labels":["x"],"tag":"a"}`, `{"amount":6,"labels":["y"],"tag":"a"}`, `{"amount":5,"labels":["y"],"tag":"b"}`},
		"more":  {`{"amount":1,"labels":["x"],"tag":"a"}`, `{"amount":2,"tag":"c"}`},
	} {
		db := plainTable(t, a.user, name, "table: "+name+"\nfields:\n  - name: tag\n    type: string\n  - name: amount\n    type: number\n  - name: labels\n    type: array\n")
		for _, d := range docs {
			plainRow(t, db, name, at(d))
		}
		db.Close()
	}
	a.c = e.tr.open(t, work, a.env, "2025-03-26")
	return a
}

// The audit's gaps (see the table at the top of the file): each tool's
// documented error codes and the result shapes no scenario above held to
// the contract's word, replayed on the main directory.
func init() {
	replayScenarios = append(replayScenarios,
		replayScenario{"every table tool answers TABLE_REQUIRED without table and TABLE_NOT_FOUND for an unmounted one", func(t *testing.T, e *replayEnv) {
			id := e.ids["view"]
			sel := map[string]any{"type": "by_id", "id": id}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"update", map[string]any{"id": id, "data": map[string]any{"title": "x"}}},
				{"delete", map[string]any{"id": id}},
				{"row_restore", map[string]any{"id": id, "at_unix_secs": time.Now().Unix()}},
				{"content_replace", map[string]any{"id": id, "field": "body", "old_str": "one", "new_str": "1"}},
				{"content_insert", map[string]any{"id": id, "field": "body", "line": 0, "content": "x"}},
				{"row_materialize", map[string]any{"selector": sel, "fields": map[string]any{"mode": "all"}, "format": "json", "dest": filepath.Join(t.TempDir(), "m")}},
				{"alias_create", map[string]any{"name": "no_table", "filter": map[string]any{"type": "like", "field": "body", "pattern": "%"}}},
			} {
				if text := e.fails(t, c.tool, c.args, "table argument is required"); text != "table argument is required in multi-table mode" {
					t.Errorf("%s without table: %q", c.tool, text)
				}
				c.args["table"] = "nope"
				if text := e.fails(t, c.tool, c.args, "table not found"); text != "table not found: nope" {
					t.Errorf("%s of an unmounted table: %q", c.tool, text)
				}
			}
			if text := e.fails(t, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "nope", "sql": "SELECT 1"}}}, "table not found"); text != "table not found: nope" {
				t.Errorf("schema_batch of an unmounted table: %q", text)
			}
			for _, tool := range []string{"schema_update", "schema_delete"} {
				args := map[string]any{"table": "nope", "scope": "user", "fields": []any{map[string]any{"name": "n", "type": "string"}}}
				if text := e.fails(t, tool, args, "table not found"); text != "table not found: nope" {
					t.Errorf("%s of an unmounted table: %q", tool, text)
				}
			}
		}},
		replayScenario{"alias_create takes table \"\" as a table named \"\" (table not found)", func(t *testing.T, e *replayEnv) {
			if text := e.fails(t, "alias_create", map[string]any{"name": "empty_table", "table": "", "filter": like}, "table not found"); text != "table not found: " {
				t.Fatalf("alias_create table \"\": %q", text)
			}
			if text := e.fails(t, "alias_create", map[string]any{"name": "empty_table", "table": "", "sources": map[string]any{"kind": "single", "value": "emo"}, "filter": like},
				"mutually exclusive"); text != "`sources` and `table` are mutually exclusive (provide one only)" {
				t.Fatalf("alias_create table \"\" with sources: %q", text)
			}
			// null is an omitted table.
			if text := e.fails(t, "alias_create", map[string]any{"name": "empty_table", "table": nil, "filter": like}, "required"); text != "table argument is required in multi-table mode" {
				t.Fatalf("alias_create table null: %q", text)
			}
		}},
		replayScenario{"an id prefix matching several rows is AMBIGUOUS_ID", func(t *testing.T, e *replayEnv) {
			n := len(e.okRows(t, "list", map[string]any{"table": "emo"}))
			want := fmt.Sprintf("ambiguous id prefix '': %d candidates", n)
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"update", map[string]any{"table": "emo", "id": "", "data": map[string]any{"text": "x"}}},
				{"delete", map[string]any{"table": "emo", "id": ""}},
			} {
				if text := e.fails(t, c.tool, c.args, "ambiguous id prefix"); text != want {
					t.Errorf("%s: %q, want %q", c.tool, text, want)
				}
			}
			if after := len(e.okRows(t, "list", map[string]any{"table": "emo"})); after != n {
				t.Fatalf("an ambiguous delete removed rows: %d → %d", n, after)
			}
			notes := len(e.okRows(t, "list", map[string]any{"table": "notes"}))
			jsonEq(t, "content_view", e.ok(t, "content_view", map[string]any{"table": "notes", "id": "", "field": "body"}),
				fmt.Sprintf(`{"error":"ERROR","data":{"code":"AMBIGUOUS_ID","message":"ambiguous id prefix '': %d candidates"}}`, notes))
		}},
		replayScenario{"alias_create needs exactly one of filter and filter_template", func(t *testing.T, e *replayEnv) {
			if text := e.fails(t, "alias_create", map[string]any{"name": "both_f", "table": "emo", "filter": like, "filter_template": "{}"}, "mutually exclusive"); text != "filter and filter_template are mutually exclusive" {
				t.Errorf("both: %q", text)
			}
			if text := e.fails(t, "alias_create", map[string]any{"name": "no_f", "table": "emo"}, "required"); text != "either filter or filter_template is required" {
				t.Errorf("neither: %q", text)
			}
		}},
		replayScenario{"alias_run of a multi source without an aggregator is AGGREGATOR_ERROR", func(t *testing.T, e *replayEnv) {
			jsonEq(t, "alias_create", e.ok(t, "alias_create", map[string]any{"name": "multi_rows", "sources": map[string]any{"kind": "multi", "value": []any{"agg_one", "multi_two"}},
				"filter": map[string]any{"type": "like", "field": "tag", "pattern": "%"}}), `{"created":"multi_rows"}`)
			if text := e.fails(t, "alias_run", map[string]any{"name": "multi_rows"}, "aggregator error"); text != "aggregator error: Multi/Pattern source aliases require an aggregator (Phase 2 limitation)" {
				t.Fatalf("alias_run: %q", text)
			}
			jsonEq(t, "alias_delete", e.ok(t, "alias_delete", map[string]any{"name": "multi_rows"}), `{"deleted":"multi_rows"}`)
		}},
		replayScenario{"query_aggregate refuses a nested group_by and a source name that is no identifier", func(t *testing.T, e *replayEnv) {
			single := map[string]any{"kind": "single", "value": "agg_one"}
			gb := map[string]any{"kind": "group_by", "by_field": "tag"}
			e.fails(t, "query_aggregate", map[string]any{"sources": single, "aggregator": map[string]any{"kind": "group_by", "by_field": "tag", "inner": gb}}, "aggregator error")
			e.fails(t, "query_aggregate", map[string]any{"sources": map[string]any{"kind": "multi", "value": []any{"agg_one", "bad-name"}},
				"aggregator": map[string]any{"kind": "count"}}, "validation error")
			jsonEq(t, "group_by without inner", e.ok(t, "query_aggregate", map[string]any{"sources": single, "aggregator": gb}),
				`{"kind":"groups","value":[{"key":"a","count":2},{"key":"b","count":1}]}`)
		}},
		replayScenario{"schema_create refuses a bad table name, scope and field type", func(t *testing.T, e *replayEnv) {
			fields := []any{map[string]any{"name": "n", "type": "string"}}
			for _, c := range []struct {
				args map[string]any
				want string
			}{
				{map[string]any{"table": ".hidden", "scope": "user", "fields": fields}, "validation error on field 'table': table name must not start with '.'"},
				{map[string]any{"table": "a b", "scope": "user", "fields": fields}, "validation error on field 'table': table name contains invalid character ' '; allowed: [A-Za-z0-9_-]"},
				{map[string]any{"table": "..", "scope": "user", "fields": fields}, "validation error on field 'table': table name '..' is reserved"},
				{map[string]any{"table": "", "scope": "user", "fields": fields}, "validation error on field 'table': table name must not be empty"},
				{map[string]any{"table": "ok_t", "scope": "global", "fields": fields}, "validation error on field 'scope': unrecognised scope 'global': expected 'project' or 'user'"},
				{map[string]any{"table": "ok_t", "scope": "user", "fields": []any{map[string]any{"name": "n", "type": "text"}}}, "validation error on field 'fields[n].type'"},
			} {
				if text := e.fails(t, "schema_create", c.args, "validation error"); !strings.HasPrefix(text, c.want) {
					t.Errorf("schema_create %v: %q, want %q", c.args, text, c.want)
				}
			}
			if _, err := os.Stat(filepath.Join(e.user, "ok_t")); err == nil {
				t.Fatal("a refused schema_create wrote its directory")
			}
		}},
		replayScenario{"schema_batch replace commits with its affects; a failing op is BATCH_ABORTED", func(t *testing.T, e *replayEnv) {
			fields := []any{map[string]any{"name": "k", "type": "string", "required": true}, map[string]any{"name": "v", "type": "number"}}
			e.ok(t, "schema_create", map[string]any{"table": "bt", "scope": "user", "fields": fields})
			for _, d := range []map[string]any{{"k": "a", "v": 1}, {"k": "a", "v": 2}, {"k": "b", "v": 3}} {
				checkRecord(t, e.ok(t, "create", map[string]any{"table": "bt", "data": d}))
			}
			replace := map[string]any{"op": "replace", "table": "bt", "match": map[string]any{"k": "a"}, "items": []any{map[string]any{"k": "a", "v": 9}}}
			jsonEq(t, "schema_batch dry_run", e.ok(t, "schema_batch", map[string]any{"dry_run": true, "ops": []any{replace}}),
				`{"committed":false,"dry_run":true,"ops_executed":1,"affects":[{"op":"replace","table":"bt","match_keys":1,"items_count":1,"would_delete_estimate":null,"would_insert":1,"note":"dry_run: DELETE/INSERT not executed"}],"yaml_writes":[],"backups_written":[],"registry_rebuilt":false}`)
			jsonEq(t, "schema_batch replace", e.ok(t, "schema_batch", map[string]any{"ops": []any{replace}}),
				`{"committed":true,"ops_executed":1,"yaml_writes":[],"backups_written":[],"registry_rebuilt":true,"affects":{"deleted":2,"inserted":1}}`)
			if rs := e.okRows(t, "list", map[string]any{"table": "bt"}); len(rs) != 2 {
				t.Fatalf("rows after replace: %v", rs)
			}
			bad := map[string]any{"op": "replace", "table": "bt", "match": map[string]any{"k": "b"}, "items": []any{map[string]any{"v": 1}}}
			if text := e.fails(t, "schema_batch", map[string]any{"ops": []any{replace, bad}}, "batch aborted at op #"); !strings.HasPrefix(text, "batch aborted at op #1: items[0]: ") {
				t.Fatalf("an invalid item: %q", text)
			}
			if text := e.fails(t, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "bt", "sql": "SELECT * FROM no_such"}}}, "batch aborted at op #"); !strings.HasPrefix(text, "batch aborted at op #0: ") {
				t.Fatalf("a failing query: %q", text)
			}
			if rs := e.okRows(t, "list", map[string]any{"table": "bt"}); len(rs) != 2 {
				t.Fatalf("an aborted batch changed the rows: %v", rs)
			}
			e.ok(t, "schema_delete", map[string]any{"table": "bt", "scope": "user"})
		}},
		replayScenario{"row_materialize answers its MATERIALIZE_* errors", func(t *testing.T, e *replayEnv) {
			dest := filepath.Join(t.TempDir(), "out")
			all := map[string]any{"mode": "all"}
			base := func(sel map[string]any) map[string]any {
				return map[string]any{"table": "emo", "selector": sel, "fields": all, "format": "json", "dest": dest}
			}
			missing := uuid4(t)
			if text := e.fails(t, "row_materialize", base(map[string]any{"type": "by_id", "id": missing}), "materialize row not found"); text != "materialize row not found: "+missing {
				t.Errorf("unknown id: %q", text)
			}
			args := base(map[string]any{"type": "by_id", "id": e.ids["emo0"]})
			args["fields"] = map[string]any{"mode": "list", "fields": []any{"nope"}}
			if text := e.fails(t, "row_materialize", args, "materialize unknown field"); text != "materialize unknown field: nope" {
				t.Errorf("unknown field: %q", text)
			}
			args = base(map[string]any{"type": "by_id", "id": e.ids["emo0"]})
			args["concat"] = true
			if text := e.fails(t, "row_materialize", args, "materialize invalid param 'concat'"); !strings.HasPrefix(text, "materialize invalid param 'concat': ") {
				t.Errorf("concat with by_id: %q", text)
			}
			none := base(map[string]any{"type": "by_filter", "filter": map[string]any{"type": "eq", "field": "text", "value": "no such text"}})
			if text := e.fails(t, "row_materialize", none, "zero rows"); text != "materialize filter matched zero rows" {
				t.Errorf("empty result: %q", text)
			}
		}},
		replayScenario{"data_snapshot answers snapshotted and purged; a scope that does not match answers empty lists; a bad scope is SNAPSHOT_ERROR", func(t *testing.T, e *replayEnv) {
			var res struct {
				Snapshotted []map[string]any `json:"snapshotted"`
				Purged      []map[string]any `json:"purged"`
			}
			text := e.ok(t, "data_snapshot", map[string]any{"table": "agg_one", "scope": "user"})
			var keys map[string]json.RawMessage
			if err := json.Unmarshal([]byte(text), &keys); err != nil || len(keys) != 2 || json.Unmarshal([]byte(text), &res) != nil || len(res.Snapshotted) != 1 {
				t.Fatalf("data_snapshot: %s", text)
			}
			s := res.Snapshotted[0]
			path, _ := s["snapshot_path"].(string)
			secs, _ := s["unix_secs"].(float64)
			if len(s) != 4 || s["table"] != "agg_one" || s["scope"] != "user" || filepath.Dir(path) != filepath.Join(e.user, "_snapshots") ||
				filepath.Base(path) != fmt.Sprintf("agg_one.%d.db", int64(secs)) {
				t.Fatalf("snapshotted entry: %v", s)
			}
			for _, p := range res.Purged {
				if len(p) != 2 || p["table"] != "agg_one" || p["generations_removed"] == nil {
					t.Fatalf("purged entry: %v", p)
				}
			}
			jsonEq(t, "a scope that does not match", e.ok(t, "data_snapshot", map[string]any{"table": "agg_one", "scope": "project"}), `{"snapshotted":[],"purged":[]}`)
			if text := e.fails(t, "data_snapshot", map[string]any{"table": "agg_one", "scope": "global"}, "snapshot error"); !strings.HasPrefix(text, "snapshot error: ") {
				t.Fatalf("a bad scope: %q", text)
			}
		}},
	)
}

// Table "" on every tool, reload's refusals and template render failures,
// each as upstream's code resolves them (resolve(Some("")), reload's
// legacy reload, MiniJinja's render error).
func init() {
	replayScenarios = append(replayScenarios,
		replayScenario{`table "" is a table named "": table not found on every table tool; alias_run and alias_delete ignore it, alias_list narrows to it, the schema tools refuse the empty name`, func(t *testing.T, e *replayEnv) {
			id := e.ids["view"]
			sel := map[string]any{"type": "by_id", "id": id}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"info", map[string]any{}},
				{"create", map[string]any{"data": map[string]any{"text": "x"}}},
				{"get", map[string]any{"id": id}},
				{"list", map[string]any{}},
				{"update", map[string]any{"id": id, "data": map[string]any{"title": "x"}}},
				{"delete", map[string]any{"id": id}},
				{"row_restore", map[string]any{"id": id, "at_unix_secs": time.Now().Unix()}},
				{"content_view", map[string]any{"id": id, "field": "body"}},
				{"content_replace", map[string]any{"id": id, "field": "body", "old_str": "one", "new_str": "1"}},
				{"content_insert", map[string]any{"id": id, "field": "body", "line": 0, "content": "x"}},
				{"row_materialize", map[string]any{"selector": sel, "fields": map[string]any{"mode": "all"}, "format": "json", "dest": filepath.Join(t.TempDir(), "m")}},
				{"data_snapshot", map[string]any{"dry_run": true}},
				{"alias_create", map[string]any{"name": "empty_table", "filter": map[string]any{"type": "like", "field": "body", "pattern": "%"}}},
				{"schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "sql": "SELECT 1"}}}},
			} {
				c.args["table"] = ""
				if c.tool == "schema_batch" {
					c.args["ops"].([]any)[0].(map[string]any)["table"] = ""
					delete(c.args, "table")
				}
				if text := e.fails(t, c.tool, c.args, "table not found"); text != "table not found: " {
					t.Errorf("%s with table \"\": %q", c.tool, text)
				}
			}
			fields := []any{map[string]any{"name": "n", "type": "string"}}
			for _, tool := range []string{"schema_create", "schema_update", "schema_delete"} {
				if text := e.fails(t, tool, map[string]any{"table": "", "scope": "user", "fields": fields}, "validation error"); text != "validation error on field 'table': table name must not be empty" {
					t.Errorf("%s with table \"\": %q", tool, text)
				}
			}
			// The global alias tools: run and delete find the alias by
			// name whatever the table; list keeps the aliases that
			// include a table named "" (none but patterns).
			e.ok(t, "alias_create", map[string]any{"name": "empty_probe", "table": "emo", "filter": map[string]any{"type": "eq", "field": "text", "value": "hello"}})
			if rs := e.okRows(t, "alias_run", map[string]any{"name": "empty_probe", "table": ""}); len(rs) != 1 {
				t.Errorf("alias_run with table \"\": %v", rs)
			}
			var listed []map[string]any
			if err := json.Unmarshal([]byte(e.ok(t, "alias_list", map[string]any{"table": ""})), &listed); err != nil {
				t.Fatal(err)
			}
			for _, a := range listed {
				if src, _ := a["sources"].(map[string]any); src["kind"] != "pattern" {
					t.Errorf("alias_list with table \"\" lists %v", a)
				}
			}
			jsonEq(t, "alias_delete with table \"\"", e.ok(t, "alias_delete", map[string]any{"name": "empty_probe", "table": ""}), `{"deleted":"empty_probe"}`)
		}},
		replayScenario{"alias_run answers ALIAS_TEMPLATE_ERROR for a template that fails to render; an undefined name renders empty", func(t *testing.T, e *replayEnv) {
			for name, tpl := range map[string]string{
				"tpl_unclosed":       `{"type":"eq","field":"text","value":"{{ v "}`,
				"tpl_unknown_filter": `{"type":"eq","field":"text","value":"{{ v|no_such_filter }}"}`,
			} {
				// Stored as given: the template is only rendered when run.
				jsonEq(t, "alias_create "+name, e.ok(t, "alias_create", map[string]any{"name": name, "table": "emo", "filter_template": tpl, "params_schema": []any{"v"}}),
					`{"created":"`+name+`"}`)
				if text := e.fails(t, "alias_run", map[string]any{"name": name, "params": map[string]any{"v": "hello"}}, "alias template render error: "); !strings.HasPrefix(text, "alias template render error: ") {
					t.Errorf("%s: %q", name, text)
				}
				e.ok(t, "alias_delete", map[string]any{"name": name})
			}
			e.ok(t, "alias_create", map[string]any{"name": "tpl_undefined", "table": "emo", "filter_template": `{"type":"eq","field":"text","value":"{{ missing }}"}`, "params_schema": []any{"v"}})
			if rs := e.okRows(t, "alias_run", map[string]any{"name": "tpl_undefined", "params": map[string]any{"v": "hello"}}); len(rs) != 0 {
				t.Errorf("an undefined name renders empty: %v", rs)
			}
			e.ok(t, "alias_delete", map[string]any{"name": "tpl_undefined"})
		}},
		replayScenario{"reload of a legacy pair whose schema.yaml no longer parses is a JSON-RPC SCHEMA_ERROR; the tables stay as they were", func(t *testing.T, e *replayEnv) {
			work := t.TempDir()
			yaml := "table: diary\nfields:\n  - name: text\n    type: string\n    required: true\n"
			plainTable(t, work, "diary", yaml)
			schema := filepath.Join(work, "diary", "schema.yaml")
			env := []string{"MINI_APP_USER_DIR=" + filepath.Join(work, "empty-user"), "MINI_APP_PROJECT_DIR=" + filepath.Join(work, "none"),
				"MINI_APP_SCHEMA=" + schema, "MINI_APP_DB=" + filepath.Join(work, "diary", "diary.db")}
			c := e.tr.open(t, work, env, "2025-03-26")
			// Legacy mode too: "" names a table, it is not the default.
			if text, isErr, rerr := replayCall(t, c, "info", map[string]any{"table": ""}); rerr != nil || !isErr || text != "table not found: " {
				t.Errorf("legacy info with table \"\": %q %v %v", text, isErr, rerr)
			}
			jsonEq(t, "legacy reload", replayMust(t, c, "reload", nil), `{"mounted":1,"added":[],"removed":[]}`)
			refused := func(code, prefix string) {
				t.Helper()
				_, _, rerr := replayCall(t, c, "reload", nil)
				if rerr == nil || rerr.Code != -32603 || !strings.HasPrefix(rerr.Message, prefix) {
					t.Fatalf("reload: %+v, want -32603 %s", rerr, prefix)
				}
				var data map[string]any
				if err := json.Unmarshal(rerr.Data, &data); err != nil || data["code"] != code || data["message"] != rerr.Message {
					t.Fatalf("reload data: %s, want code %s", rerr.Data, code)
				}
			}
			if err := os.WriteFile(schema, []byte("table: [diary\nfields: {\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			refused("SCHEMA_ERROR", "schema parse error: ")
			if err := os.WriteFile(schema, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			// Nothing changed: the refused reloads swapped nothing in.
			jsonEq(t, "reload after the refusals", replayMust(t, c, "reload", nil), `{"mounted":1,"added":[],"removed":[]}`)
		}},
	)
}
