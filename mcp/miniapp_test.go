package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// miniTool calls a mini-app tool over HTTP as the bootstrap agent and
// returns its text and isError.
func (g *gateway) miniTool(session, name string, args map[string]any) (string, bool) {
	g.t.Helper()
	return g.miniToolAs(g.agent, session, name, args)
}

// miniToolAs calls a mini-app tool over HTTP with a token.
func (g *gateway) miniToolAs(token, session, name string, args map[string]any) (string, bool) {
	g.t.Helper()
	r := g.call(token, session, "tools/call", map[string]any{"name": name, "arguments": args})
	m := r.json(g.t)
	res, ok := m["result"].(map[string]any)
	if r.status != 200 || !ok {
		g.t.Fatalf("%s: %d %s", name, r.status, r.raw)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"] == true
}

// TestMiniAppGateway: the mini-app tools on the bootstrap's mi database over
// the HTTP endpoint, with the session rules, and the pipeline: a lock that
// refuses a REST write refuses the same tool call with the same message.
func TestMiniAppGateway(t *testing.T) {
	g := newGateway(t, time.Minute)
	if text, isErr := g.miniTool("", "list", map[string]any{"table": "notes"}); !isErr || !strings.Contains(text, "start_ai_session") {
		t.Fatalf("without a session: %v %s", isErr, text)
	}
	sid := g.start(g.agent)
	if text, isErr := g.miniTool(sid, "info", map[string]any{}); !isErr || text != "table argument is required in multi-table mode" {
		t.Fatalf("info without table: %s", text)
	}
	text, isErr := g.miniTool(sid, "list", map[string]any{"table": "notes", "order_by": []any{map[string]any{"field": "title"}}})
	var rows []struct {
		ID   string
		Data map[string]any
	}
	if err := json.Unmarshal([]byte(text), &rows); err != nil || isErr || len(rows) != 3 || rows[0].Data["title"] != "Read me over REST" {
		t.Fatalf("list: %s", text)
	}
	text, isErr = g.miniTool(sid, "create", map[string]any{"table": "notes", "schema": "app", "data": map[string]any{"title": "from mcp"}})
	if isErr || !strings.Contains(text, `"data":{"title":"from mcp"}`) {
		t.Fatalf("create: %s", text)
	}
	// The same row over REST.
	if r := g.restDo("GET", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0&title=eq.from%20mcp", g.admin, nil); r.status != 200 || !strings.Contains(string(r.raw), "from mcp") {
		t.Fatalf("REST read: %d %s", r.status, r.raw)
	}

	// A lock freezes writes: REST and the mini-app tool refuse alike.
	if _, err := g.st.AddLock(context.Background(), store.Lock{ProjectID: g.proj.ID, Pattern: "mi/app/notes", Mask: "-r--"}); err != nil {
		t.Fatal(err)
	}
	var restMsg string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r := g.restDo("POST", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes", g.admin, map[string]any{"title": "x"})
		if r.status == 403 {
			_, restMsg = r.httpError(t)
			break
		}
	}
	if !strings.Contains(restMsg, "got [admin]") {
		t.Fatalf("REST write not refused by the lock: %q", restMsg)
	}
	if text, isErr := g.miniTool(sid, "create", map[string]any{"table": "notes", "data": map[string]any{"title": "x"}}); !isErr || text != restMsg {
		t.Fatalf("locked create: %v %q, want %q", isErr, text, restMsg)
	}
	// Reads still pass; reload, which re-scans drop-in mode's mounted
	// directories, is no tool of the gateway.
	if _, isErr := g.miniTool(sid, "list", map[string]any{"table": "notes"}); isErr {
		t.Fatal("read refused under a -r-- lock")
	}
	r := g.call(g.agent, sid, "tools/call", map[string]any{"name": "reload", "arguments": map[string]any{}})
	if code, _, _ := r.rpcError(t); code != -32602 {
		t.Fatalf("reload: %s", r.raw)
	}
	// The calls are journaled in the session.
	v := g.journal(sid)
	if len(v.Calls) < 5 || v.Calls[0].Tool != "info" {
		t.Fatalf("journal: %+v", v.Calls)
	}
}
