package mcp_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

const notesAuto = "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"

func notes(extra map[string]any) map[string]any {
	m := map[string]any{"type": "mi", "schema": "app", "table": "notes"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestMiniAppFlow walks the session flow on the bootstrap mini-app table:
// meta tools, then read, insert, update and delete, each answer checked
// against REST.
func TestMiniAppFlow(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)

	dbs := g.tool(g.agent, sid, "meta_list_databases", map[string]any{}).ok(t)
	if dbs.text != `[{"type":"mi","schema":"app"}]` {
		t.Fatalf("meta_list_databases = %s", dbs.text)
	}
	if b, _ := json.Marshal(dbs.structured); string(b) != `{"databases":[{"schema":"app","type":"mi"}]}` {
		t.Fatalf("structuredContent = %s", b)
	}
	tables := g.tool(g.agent, sid, "meta_list_tables", map[string]any{"type": "mi", "schema": "app"}).ok(t)
	if tables.text != `[{"type":"mi","schema":"app","table":"notes"}]` {
		t.Fatalf("meta_list_tables = %s", tables.text)
	}
	desc := g.tool(g.agent, sid, "meta_describe_table", notes(nil)).ok(t).object(t)
	var cols []string
	for _, c := range desc["columns"].([]any) {
		col := c.(map[string]any)
		cols = append(cols, col["name"].(string))
		for _, k := range []string{"type", "kind", "nullable", "primary_key", "has_default", "default"} {
			if _, ok := col[k]; !ok {
				t.Errorf("column %v lacks %s", col["name"], k)
			}
		}
		if col["name"] == "id" && col["primary_key"] != true {
			t.Errorf("id is not the key: %v", col)
		}
		if col["name"] == "title" && col["nullable"] != false {
			t.Errorf("title nullable: %v", col)
		}
	}
	if !slices.Equal(cols, []string{"id", "created_at", "updated_at", "title", "body"}) {
		t.Fatalf("columns %v", cols)
	}

	// A page reads exactly as the REST json answer of the same parameters.
	read := g.tool(g.agent, sid, "auto_read_rows", notes(map[string]any{"page_size": 2, "page_number": 1,
		"query": map[string]any{"oy": "title.as", "fc": "title,body"}})).ok(t)
	rest := g.restDo("GET", notesAuto+"?ps=2&pg=1&oy=title.as&fc=title,body", g.agent, nil)
	if rest.status != 200 || read.text != strings.TrimSuffix(string(rest.raw), "\n") {
		t.Fatalf("MCP page\n%s\nREST page (%d)\n%s", read.text, rest.status, rest.raw)
	}
	if !strings.HasSuffix(read.text, `"page":{"number":1,"size":2}}`) || read.structured["page"] == nil {
		t.Fatalf("page envelope: %s", read.text)
	}
	filtered := g.tool(g.agent, sid, "auto_read_rows", notes(map[string]any{"page_size": 10, "page_number": 0,
		"query": map[string]any{"title": "like.Tok*", "fc": "title"}})).ok(t)
	if filtered.text != `{"data":[{"title":"Tokens"}],"page":{"number":0,"size":10}}` {
		t.Fatalf("filtered: %s", filtered.text)
	}
	// An array repeats a parameter: two filters on one column.
	twice := g.tool(g.agent, sid, "auto_read_rows", notes(map[string]any{"page_size": 10, "page_number": 0,
		"query": map[string]any{"title": []any{"ge.R", "lt.T"}, "fc": "title", "oy": "title.as"}})).ok(t)
	if twice.text != `{"data":[{"title":"Read me over REST"}],"page":{"number":0,"size":10}}` {
		t.Fatalf("two filters: %s", twice.text)
	}

	// Insert: null for the column the database fills.
	ins := g.tool(g.agent, sid, "auto_insert_rows", notes(map[string]any{"rows": []any{
		map[string]any{"id": nil, "title": "mcp one"}, map[string]any{"title": "mcp two", "body": "b"},
	}})).ok(t).object(t)
	data, _ := ins["data"].([]any)
	if ins["rows_affected"] != json.Number("2") || len(data) != 2 || data[0].(map[string]any)["id"] == nil {
		t.Fatalf("insert: %v", ins)
	}
	upd := g.tool(g.agent, sid, "auto_update_rows", notes(map[string]any{"query": map[string]any{"title": "eq.mcp one"},
		"values": map[string]any{"body": "changed"}})).ok(t)
	if upd.text != `{"rows_affected":1}` {
		t.Fatalf("update: %s", upd.text)
	}
	check := g.tool(g.agent, sid, "auto_read_rows", notes(map[string]any{"page_size": 5, "page_number": 0,
		"query": map[string]any{"title": "eq.mcp one", "fc": "body"}})).ok(t)
	if check.text != `{"data":[{"body":"changed"}],"page":{"number":0,"size":5}}` {
		t.Fatalf("after update: %s", check.text)
	}

	// Delete: a filter is required unless all is true.
	code, msg := g.tool(g.agent, sid, "auto_delete_rows", notes(nil)).refusal(t)
	if code != "INVALID" || !strings.Contains(msg, "needs at least one filter") {
		t.Fatalf("unfiltered delete: %s %s", code, msg)
	}
	del := g.tool(g.agent, sid, "auto_delete_rows", notes(map[string]any{"query": map[string]any{"title": "in.mcp one,mcp two"}})).ok(t)
	if del.text != `{"rows_affected":2}` {
		t.Fatalf("delete: %s", del.text)
	}

	// Refusals the caller can fix: isError with {code, message}.
	for _, c := range []struct {
		tool    string
		args    map[string]any
		code    string
		mention string
	}{
		{"auto_read_rows", notes(map[string]any{"page_size": 101, "page_number": 0}), "INVALID", "over the limit of 100"},
		{"auto_read_rows", notes(map[string]any{"page_size": 1, "page_number": 0, "query": map[string]any{"nope": "eq.1"}}), "INVALID", `unknown column "nope"`},
		{"auto_read_rows", notes(map[string]any{"page_size": 1, "page_number": 0, "query": map[string]any{"title": "zz.1"}}), "INVALID", "zz"},
		{"auto_read_rows", notes(map[string]any{"page_size": 1, "page_number": 0, "query": map[string]any{"ps": "5"}}), "INVALID", "page_size"},
		{"auto_read_rows", notes(map[string]any{"page_size": 1, "page_number": 0, "query": map[string]any{"format": "csv"}}), "INVALID", "JSON"},
		{"auto_delete_rows", notes(map[string]any{"query": map[string]any{"all": "true"}}), "INVALID", "all argument"},
		{"auto_update_rows", notes(map[string]any{"query": map[string]any{"oy": "id.as", "id": "eq.x"}, "values": map[string]any{"body": "x"}}), "INVALID", "only applies to auto_read_rows"},
		{"auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "nope", "page_size": 1, "page_number": 0}, "NOT_FOUND", "table not found"},
		{"meta_describe_table", map[string]any{"type": "mi", "schema": "app", "table": "nope"}, "NOT_FOUND", "table not found"},
		{"meta_list_tables", map[string]any{"type": "pg", "schema": "nope"}, "NOT_FOUND", "not found"},
		{"auto_insert_rows", notes(map[string]any{"rows": []any{map[string]any{"body": "no title"}}}), "INVALID", "title"},
	} {
		code, msg := g.tool(g.agent, sid, c.tool, c.args).refusal(t)
		if code != c.code || !strings.Contains(msg, c.mention) {
			t.Errorf("%s %v: %s %q, want %s mentioning %q", c.tool, c.args, code, msg, c.code, c.mention)
		}
	}
	// The same refusal as REST, word for word.
	_, msg = g.tool(g.agent, sid, "auto_read_rows", notes(map[string]any{"page_size": 1, "page_number": 0, "query": map[string]any{"nope": "eq.1"}})).refusal(t)
	var restErr struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(g.restDo("GET", notesAuto+"?ps=1&pg=0&nope=eq.1", g.agent, nil).raw, &restErr)
	if restErr.Error.Message != msg || restErr.Error.Code != "INVALID" {
		t.Fatalf("REST says %+v, MCP %q", restErr, msg)
	}
}

// TestSessionRules: every tool but start_ai_session and help needs a live
// session of the same identity in X-Session-Id.
func TestSessionRules(t *testing.T) {
	g := newGateway(t, 2*time.Second)
	_, other := g.identity("other-agent", "mcp", []string{"admin"}, nil, auth.MintOptions{})

	g.tool(g.agent, "", "help", map[string]any{}).ok(t)
	code, msg := g.tool(g.agent, "", "ping", map[string]any{}).refusal(t)
	if code != sessions.CodeRequired || !strings.Contains(msg, "X-Session-Id") || !strings.Contains(msg, "start_ai_session") {
		t.Fatalf("no session: %s %q", code, msg)
	}
	for _, tool := range []string{"end_ai_session", "meta_list_databases", "auto_read_rows", "auto_delete_rows"} {
		if code, _ := g.tool(g.agent, "", tool, map[string]any{}).refusal(t); code != sessions.CodeRequired {
			t.Errorf("%s without a session: %s", tool, code)
		}
	}
	if code, _ := g.tool(g.agent, "01234567-89ab-7def-8123-456789abcdef", "ping", map[string]any{}).refusal(t); code != sessions.CodeNotFound {
		t.Fatalf("unknown session: %s", code)
	}
	foreign := g.start(other)
	if code, _ := g.tool(g.agent, foreign, "ping", map[string]any{}).refusal(t); code != sessions.CodeNotFound {
		t.Fatalf("another identity's session: %s", code)
	}
	code, msg = g.tool(g.agent, "", "start_ai_session", map[string]any{"name": "x"}).refusal(t)
	if code != "INVALID" || !strings.Contains(msg, `missing required argument "context"`) {
		t.Fatalf("start without context: %s %q", code, msg)
	}

	// Use keeps a session alive; idling past the timeout expires it.
	sid := g.start(g.agent)
	// (The idle timeout is 2 s; calls 600 ms apart keep the session past
	// it, with room for a loaded machine.)
	for range 4 {
		time.Sleep(600 * time.Millisecond)
		g.tool(g.agent, sid, "ping", map[string]any{}).ok(t)
	}
	time.Sleep(2500 * time.Millisecond)
	if code, _ := g.tool(g.agent, sid, "ping", map[string]any{}).refusal(t); code != sessions.CodeExpired {
		t.Fatalf("idle session: %s", code)
	}

	// Ended sessions refuse every call, end_ai_session included.
	sid = g.start(g.agent)
	end := g.tool(g.agent, sid, "end_ai_session", map[string]any{}).ok(t).object(t)
	if end["session_id"] != sid || end["ended_at"] == nil {
		t.Fatalf("end: %v", end)
	}
	for _, tool := range []string{"ping", "end_ai_session"} {
		if code, _ := g.tool(g.agent, sid, tool, map[string]any{}).refusal(t); code != sessions.CodeEnded {
			t.Fatalf("%s after end: %s", tool, code)
		}
	}
}

// TestJournal: each call is journaled with its arguments before the tool
// runs — a call the tool refuses included — and the journal is readable by
// admins through the admin API.
func TestJournal(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	calls := []struct {
		tool    string
		args    string
		outcome string
	}{
		{"meta_list_databases", `{}`, "ok"},
		{"auto_read_rows", `{"type":"mi","schema":"app","table":"notes","page_size":2,"page_number":0,"query":{"oy":"title.as"}}`, "ok"},
		{"auto_read_rows", `{"type":"mi","schema":"app","table":"notes","page_size":2,"page_number":0,"query":{"secret_column":"eq.1"}}`, "INVALID"},
		{"auto_insert_rows", `{"type":"mi","schema":"app","table":"nope","rows":[{"title":"x"}]}`, "NOT_FOUND"},
		{"auto_delete_rows", `{"type":"mi","schema":"app","table":"notes","surprise":true}`, "INVALID"},
		{"ping", `{}`, "ok"},
	}
	for _, c := range calls {
		g.tool(g.agent, sid, c.tool, json.RawMessage(c.args))
	}
	g.tool(g.agent, sid, "help", map[string]any{}) // help runs outside the session

	v := g.journal(sid)
	if v.Session.ID != sid || v.Session.Identity != "agent" || v.Session.Name != "test" || v.Session.State != sessions.StateLive {
		t.Fatalf("session %+v", v.Session)
	}
	if len(v.Calls) != len(calls) {
		t.Fatalf("%d calls journaled, want %d: %+v", len(v.Calls), len(calls), v.Calls)
	}
	for i, c := range calls {
		got := v.Calls[i]
		if got.Seq != int64(i+1) || got.Tool != c.tool || string(got.Arguments) != c.args || got.Outcome != c.outcome || got.StartedAt.IsZero() {
			t.Errorf("call %d = %+v (args %s), want %s %s %s", i, got, got.Arguments, c.tool, c.args, c.outcome)
		}
		if c.outcome != "ok" && got.Message == "" {
			t.Errorf("call %d: refusal without message", i)
		}
	}
	if v.Calls[1].Rows != 2 || v.Calls[1].DurationMS <= 0 {
		t.Errorf("read call: rows %d duration %v", v.Calls[1].Rows, v.Calls[1].DurationMS)
	}

	// Admin role only; another project's or an unknown session is 404.
	_, reader := g.identity("reader", "user", []string{"reader"}, nil, auth.MintOptions{})
	r := g.restDo("GET", "/minimal/api/admin/v1/sessions/"+sid+"/journal", reader, nil)
	if r.status != 403 || !strings.Contains(string(r.raw), "reading a session journal needs role admin, got [reader]") {
		t.Fatalf("non-admin: %d %s", r.status, r.raw)
	}
	if r := g.restDo("GET", "/minimal/api/admin/v1/sessions/nope/journal", g.admin, nil); r.status != 404 {
		t.Fatalf("unknown session: %d %s", r.status, r.raw)
	}
	if r := g.restDo("GET", "/minimal/api/admin/v1/sessions/"+sid+"/journal", "", nil); r.status != 401 {
		t.Fatalf("no token: %d", r.status)
	}
}

// TestToolSchemas: every input schema is complete and strict, and the
// server enforces it with a refusal naming the argument.
func TestToolSchemas(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	r := g.call(g.agent, "", "tools/list", nil)
	tools := r.json(t)["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, x := range tools {
		tl := x.(map[string]any)
		name := tl["name"].(string)
		if miniapp.Lookup(name) != nil {
			// mini-app-mcp's tools keep its argument rules (unknown keys
			// ignored) and error shapes; miniapp_test.go covers them.
			continue
		}
		names = append(names, name)
		// The listing is compact: a short description, each argument typed
		// (help gives the rest).
		desc, _ := tl["description"].(string)
		if desc == "" || len(desc) > 80 {
			t.Errorf("%s: listed description of %d bytes", name, len(desc))
		}
		listed := tl["inputSchema"].(map[string]any)
		for p, ps := range listed["properties"].(map[string]any) {
			if ps.(map[string]any)["type"] == nil {
				t.Errorf("%s.%s: listed untyped", name, p)
			}
		}
		// help {tool} has the whole entry: the full description and a
		// strict schema, every argument typed and described.
		entry := g.tool(g.agent, sid, "help", map[string]any{"tool": name}).ok(t).object(t)
		if full, _ := entry["description"].(string); len(full) < len(desc) || len(full) > 600 {
			t.Errorf("%s: help description of %d bytes", name, len(full))
		}
		s := entry["input_schema"].(map[string]any)
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: schema not strict: %v", name, s)
		}
		props := s["properties"].(map[string]any)
		if len(props) != len(listed["properties"].(map[string]any)) {
			t.Errorf("%s: help has arguments %v, the listing %v", name, props, listed["properties"])
		}
		for p, ps := range props {
			pm := ps.(map[string]any)
			if pm["type"] == nil || pm["description"] == nil {
				t.Errorf("%s.%s: untyped or undescribed: %v", name, p, pm)
			}
		}
		for _, req := range s["required"].([]any) {
			if _, ok := props[req.(string)]; !ok {
				t.Errorf("%s: required %v is not a property", name, req)
			}
		}
		if !slices.Equal(anyStrings(s["required"]), anyStrings(listed["required"])) {
			t.Errorf("%s: help requires %v, the listing %v", name, s["required"], listed["required"])
		}
		// An unknown argument is refused, naming it, by every tool.
		session := sid
		code, msg := g.tool(g.agent, session, name, map[string]any{"bogus": 1}).refusal(t)
		if code != "INVALID" || !strings.Contains(msg, `unknown argument "bogus"`) {
			t.Errorf("%s with bogus: %s %q", name, code, msg)
		}
	}
	want := []string{"start_ai_session", "end_ai_session", "help", "ping", "meta_list_databases", "meta_list_tables",
		"meta_describe_table", "auto_read_rows", "auto_insert_rows", "auto_update_rows", "auto_delete_rows"}
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}
	// end_ai_session refused for its argument did not end the session.
	g.tool(g.agent, sid, "ping", map[string]any{}).ok(t)

	read := func(extra map[string]any) map[string]any {
		return notes(mergeMaps(map[string]any{"page_size": 1, "page_number": 0}, extra))
	}
	for _, c := range []struct {
		tool    string
		args    any
		mention string
	}{
		{"auto_read_rows", read(map[string]any{"page_size": "10"}), `argument "page_size" must be an integer`},
		{"auto_read_rows", read(map[string]any{"page_size": 1.5}), `argument "page_size" must be an integer`},
		{"auto_read_rows", read(map[string]any{"page_size": 0}), `argument "page_size" must be at least 1`},
		{"auto_read_rows", read(map[string]any{"page_number": -1}), `argument "page_number" must be at least 0`},
		{"auto_read_rows", notes(map[string]any{"page_size": 1}), `missing required argument "page_number"`},
		{"auto_read_rows", read(map[string]any{"table": ""}), `argument "table" is empty`},
		{"auto_read_rows", read(map[string]any{"type": 7}), `argument "type" must be a string`},
		{"auto_read_rows", read(map[string]any{"query": "oy=id.as"}), `argument "query" must be an object`},
		{"auto_read_rows", read(map[string]any{"query": map[string]any{"oy": map[string]any{}}}), `query["oy"] must be a string`},
		{"auto_read_rows", read(map[string]any{"query": map[string]any{"id": []any{[]any{"x"}}}}), "nested array"},
		{"auto_insert_rows", notes(map[string]any{"rows": []any{}}), `argument "rows" must be a non-empty array`},
		{"auto_insert_rows", notes(map[string]any{"rows": []any{1}}), `row 0 of argument "rows" is not an object`},
		{"auto_insert_rows", notes(map[string]any{"rows": map[string]any{"title": "x"}}), `argument "rows" must be a non-empty array`},
		{"auto_update_rows", notes(map[string]any{"values": map[string]any{}}), `argument "values" must be an object`},
		{"auto_delete_rows", notes(map[string]any{"all": "yes"}), `argument "all" must be true or false`},
		{"ping", []any{1}, "arguments must be a JSON object"},
	} {
		code, msg := g.tool(g.agent, sid, c.tool, c.args).refusal(t)
		if code != "INVALID" || !strings.Contains(msg, c.mention) {
			t.Errorf("%s %v: %s %q, want mention of %q", c.tool, c.args, code, msg, c.mention)
		}
	}
}

// anyStrings returns a JSON array of strings as strings (nil for none).
func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

func mergeMaps(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// TestToolsListFiltering: tools/list and help show what the caller's
// key_type and roles allow; a call the listing hides is still refused by the
// permission pipeline, with the message REST gives.
func TestToolsListFiltering(t *testing.T) {
	g := newGateway(t, time.Hour)
	ctx := t.Context()
	agent, err := g.st.Identity(ctx, g.proj.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	mint := func(kt string) string {
		tok, err := auth.Mint(ctx, g.st, g.key, agent, auth.MintOptions{KeyType: kt})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// listed returns the gateway's own tools; mini collects the mini-app
	// tools, checked separately.
	mini := map[string][]string{}
	listed := func(tok string) []string {
		r := g.call(tok, "", "tools/list", nil)
		var names []string
		mini[tok] = nil
		for _, x := range r.json(t)["result"].(map[string]any)["tools"].([]any) {
			name := x.(map[string]any)["name"].(string)
			if miniapp.Lookup(name) != nil {
				mini[tok] = append(mini[tok], name)
				continue
			}
			names = append(names, name)
		}
		sort.Strings(names)
		sort.Strings(mini[tok])
		return names
	}
	// No custom API is defined: call_api and meta_list_custom_apis are not
	// listed (TestCustomAPIListing lists them).
	always := []string{"end_ai_session", "help", "meta_describe_table", "meta_list_databases", "meta_list_tables", "ping", "start_ai_session"}
	for _, c := range []struct {
		keyType string
		extra   []string
	}{
		{"crud", []string{"auto_delete_rows", "auto_insert_rows", "auto_read_rows", "auto_update_rows"}},
		{"-r--", []string{"auto_read_rows"}},
		{"c---", []string{"auto_insert_rows"}},
		{"-ru-", []string{"auto_read_rows", "auto_update_rows"}},
	} {
		tok := mint(c.keyType)
		want := append(append([]string{}, always...), c.extra...)
		sort.Strings(want)
		if got := listed(tok); !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", c.keyType, got, want)
		}
		if c.keyType == "-r--" && fmt.Sprint(mini[tok]) != "[alias_list alias_run content_view data_snapshot get info list query_aggregate row_materialize]" {
			t.Errorf("-r-- lists mini-app tools %v", mini[tok])
		}
		if c.keyType == "crud" && len(mini[tok]) != 21 { // reload is drop-in mode's
			t.Errorf("crud lists mini-app tools %v", mini[tok])
		}
		sid := g.start(tok)
		var helped []string
		for _, e := range g.tool(tok, sid, "help", map[string]any{}).ok(t).value(t).([]any) {
			helped = append(helped, e.(map[string]any)["name"].(string))
		}
		sort.Strings(helped)
		if all := append(slices.Clone(want), mini[tok]...); !slices.Equal(helped, slices.Sorted(slices.Values(all))) {
			t.Errorf("%s: help lists %v", c.keyType, helped)
		}
	}

	// Roles count too: an mcp identity whose only role reads lists only the
	// read tool, and one without any granting role lists no data tool.
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: []store.Template{{Name: "read-notes", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}}}}},
		Bindings:  []store.Binding{{Role: "reader", Templates: []string{"read-notes"}}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		roles []string
		extra []string
	}{{"rbot", []string{"reader"}, []string{"auto_read_rows"}}, {"nobot", []string{"nothing"}, nil}} {
		id, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: c.name, Kind: "mcp", Roles: c.roles, KeyType: "crud", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := auth.Mint(ctx, g.st, g.key, id, auth.MintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := append(append([]string{}, always...), c.extra...)
		sort.Strings(want)
		deadline := time.Now().Add(3 * time.Second)
		for {
			got := listed(tok)
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (roles %v) lists %v, want %v", c.name, c.roles, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A read-only token calling an insert: refused by the pipeline with the
	// roles, exactly as REST refuses it.
	ro := mint("-r--")
	sid := g.start(ro)
	code, msg := g.tool(ro, sid, "auto_insert_rows", notes(map[string]any{"rows": []any{map[string]any{"title": "x"}}})).refusal(t)
	rest := g.restDo("POST", notesAuto, ro, []any{map[string]any{"title": "x"}})
	var restErr struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(rest.raw, &restErr)
	if code != "FORBIDDEN" || rest.status != 403 || msg != restErr.Error.Message || !strings.Contains(msg, "got [admin]") {
		t.Fatalf("MCP %s %q; REST %d %q", code, msg, rest.status, restErr.Error.Message)
	}
	if code, _ := g.tool(ro, sid, "help", map[string]any{"tool": "auto_insert_rows"}).refusal(t); code != "NOT_FOUND" {
		t.Fatalf("help on a hidden tool: %s", code)
	}
	entry := g.tool(ro, sid, "help", map[string]any{"tool": "auto_read_rows"}).ok(t).object(t)
	if entry["name"] != "auto_read_rows" || entry["session_required"] != true || entry["input_schema"] == nil || entry["example"] == nil {
		t.Fatalf("help entry %v", entry)
	}
}

// TestRefusalShapes shows the three shapes side by side.
func TestRefusalShapes(t *testing.T) {
	g := newGateway(t, time.Hour)
	// 1. Credential layer: HTTP, before JSON-RPC.
	r := g.call("", "", "tools/list", nil)
	if code, _ := r.httpError(t); r.status != 401 || code != "UNAUTHENTICATED" {
		t.Fatalf("credential: %d %s", r.status, r.raw)
	}
	// 2. Unknown tool: JSON-RPC error.
	r = g.call(g.agent, "", "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}})
	if code, _, _ := r.rpcError(t); code != -32602 {
		t.Fatalf("unknown tool: %s", r.raw)
	}
	// 3. Caller-fixable: a result with isError true.
	res := g.tool(g.agent, "", "ping", map[string]any{})
	if code, _ := res.refusal(t); code != sessions.CodeRequired {
		t.Fatalf("session refusal: %s", res.text)
	}
}
