package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpPost sends one 2026-07-28 JSON-RPC request to a running server.
// mcpPostUntil repeats mcpPost (params {}) until it answers status, for at
// most three seconds, and returns the last answer.
func mcpPostUntil(t *testing.T, addr, token, session, method string, status int) (int, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		got, m := mcpPost(t, addr, token, session, method, map[string]any{})
		if got == status || time.Now().After(deadline) {
			return got, m
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mcpPost(t *testing.T, addr, token, session, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", "http://"+addr+"/minimal/mcp/rpc/v1", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("LB-Access-Token", token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if session != "" {
		req.Header.Set("X-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not JSON (%d): %s", method, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

// toolText calls a tool and returns its text and isError.
func toolText(t *testing.T, addr, token, session, name string, args map[string]any) (string, bool) {
	t.Helper()
	status, m := mcpPost(t, addr, token, session, "tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := m["result"].(map[string]any)
	if status != 200 || !ok {
		t.Fatalf("%s: %d %v", name, status, m)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"] == true
}

// TestMCPServe: the served endpoint, switching MCP off and on with the CLI,
// reading the journal with the CLI, and SIGTERM draining both listeners.
func TestMCPServe(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	if s.mcpAddr == "" || s.mcpAddr == s.addr {
		t.Fatalf("MCP address %q (REST %q)", s.mcpAddr, s.addr)
	}

	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "e2e", "context": "end-to-end test"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr || started.SessionID == "" {
		t.Fatalf("start: %s", text)
	}
	sid := started.SessionID
	if text, isErr := toolText(t, s.mcpAddr, agent, sid, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
		"page_size": 10, "page_number": 0, "query": map[string]any{"oy": "title.as", "fc": "title"}}); isErr || strings.Count(text, `"title"`) != 3 {
		t.Fatalf("read: %s", text)
	}
	if text, isErr := toolText(t, s.mcpAddr, agent, sid, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
		"page_size": 10, "page_number": 0, "query": map[string]any{"secret": "eq.1"}}); !isErr || !strings.Contains(text, `unknown column \"secret\"`) {
		t.Fatalf("bad read: %s", text)
	}
	// A user identity is refused at the credential layer.
	if status, m := mcpPost(t, s.mcpAddr, admin, "", "tools/list", map[string]any{}); status != 403 || !strings.Contains(fmt.Sprint(m["error"]), "kind user") {
		t.Fatalf("user token: %d %v", status, m)
	}

	// MCP off with the CLI: refused; on again: served.
	out, errOut, code := cli(t, "space", "mcp", "--data-dir", dir, "--org", "demo", "--project", "demo", "--space", "main", "off")
	if code != 0 || out != "MCP is off for space main of demo/demo\n" {
		t.Fatalf("space mcp off: %d %q %q", code, out, errOut)
	}
	// Another process's write on SQLite reaches the server within the
	// credential layer's one-second cache.
	status, m := mcpPostUntil(t, s.mcpAddr, agent, sid, "tools/list", 403)
	if status != 403 || !strings.Contains(fmt.Sprint(m["error"]), "MCP is switched off") {
		t.Fatalf("MCP off: %d %v", status, m)
	}
	if out, _, code := cli(t, "space", "mcp", "--data-dir", dir); code != 0 || !strings.Contains(out, "MCP is off") {
		t.Fatalf("space mcp (state): %d %q", code, out)
	}
	if _, _, code := cli(t, "space", "mcp", "--data-dir", dir, "sideways"); code != 2 {
		t.Fatalf("space mcp sideways: exit %d", code)
	}
	if out, _, code := cli(t, "space", "mcp", "--data-dir", dir, "--space", "main", "on"); code != 0 || !strings.Contains(out, "MCP is on") {
		t.Fatalf("space mcp on: %d %q", code, out)
	}
	if status, _ := mcpPostUntil(t, s.mcpAddr, agent, sid, "tools/list", 200); status != 200 {
		t.Fatalf("MCP on again: %d", status)
	}

	// The journal, through the CLI: both calls, the refused one included.
	out, errOut, code = cli(t, "session", "journal", "--data-dir", dir, sid)
	if code != 0 || !strings.Contains(out, "session "+sid+"  live  identity agent") ||
		!strings.Contains(out, `{"page_number":0,"page_size":10,"query":{"secret":"eq.1"},"schema":"app","table":"notes","type":"mi"}`) ||
		!strings.Contains(out, "INVALID") || strings.Count(out, "auto_read_rows") != 2 {
		t.Fatalf("session journal: %d %s %s", code, out, errOut)
	}
	out, _, code = cli(t, "session", "journal", "--data-dir", dir, "--json", sid)
	var v struct {
		Session struct{ ID, State string }
		Calls   []struct {
			Tool, Outcome string
			Arguments     map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || v.Session.ID != sid || len(v.Calls) != 2 ||
		v.Calls[0].Outcome != "ok" || v.Calls[1].Outcome != "INVALID" || v.Calls[1].Arguments["table"] != "notes" {
		t.Fatalf("journal --json: %v %s", err, out)
	}
	// And through the admin API.
	if code, _, body := get(t, "http://"+s.addr+"/minimal/api/admin/v1/sessions/"+sid+"/journal", admin); code != 200 || !strings.Contains(body, `"secret":"eq.1"`) {
		t.Fatalf("admin journal: %d %s", code, body)
	}
	if _, errOut, code := cli(t, "session", "journal", "--data-dir", dir, "nope"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("unknown session: %d %s", code, errOut)
	}

	// SIGTERM drains and closes both listeners.
	s.stop(t)
	for _, addr := range []string{s.addr, s.mcpAddr} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after SIGTERM", addr)
		}
	}
}

// TestMCPStdio drives `minimal mcp --stdio` with JSON-RPC lines on stdin.
func TestMCPStdio(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir) // bootstraps the data dir; keeps serving alongside
	defer s.stop(t)
	tokenFile := filepath.Join(dir, "agent.token")

	cmd := exec.Command(binary, "mcp", "--stdio", "--token-file", tokenFile, "--data-dir", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				answers <- m
			}
		}
		close(answers)
	}()
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	next := func(id int) map[string]any {
		t.Helper()
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatalf("stdout closed; stderr:\n%s", stderr.String())
			}
			if m["id"] != float64(id) {
				t.Fatalf("answer %v, want id %d", m, id)
			}
			return m
		case <-time.After(15 * time.Second):
			t.Fatalf("no answer to %d; stderr:\n%s", id, stderr.String())
		}
		return nil
	}
	toolCall := func(id int, name string, args map[string]any, meta map[string]any) map[string]any {
		params := map[string]any{"name": name, "arguments": args}
		if meta != nil {
			params["_meta"] = meta
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
		return next(id)
	}
	text := func(m map[string]any) (string, bool) {
		res := m["result"].(map[string]any)
		return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"] == true
	}

	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "stdio-test", "version": "1"}}})
	if init := next(1); init["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", init)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{}})
	var names []string
	for _, x := range next(2)["result"].(map[string]any)["tools"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if len(names) != 30 || strings.Contains(strings.Join(names, ","), "ai_session") { // 9 table tools, 21 mini-app tools (reload is drop-in mode's; no custom API to call)
		t.Fatalf("stdio tools: %v", names)
	}
	// No X-Session-Id: the implicit session serves every call.
	ping, isErr := text(toolCall(3, "ping", map[string]any{}, nil))
	var p struct {
		SessionID string  `json:"session_id"`
		ExpiresAt *string `json:"expires_at"`
		Identity  string
	}
	if err := json.Unmarshal([]byte(ping), &p); err != nil || isErr || p.SessionID == "" || p.ExpiresAt != nil || p.Identity != "agent" {
		t.Fatalf("ping: %s", ping)
	}
	if rows, isErr := text(toolCall(4, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 2, "page_number": 0,
		"query": map[string]any{"oy": "title.as", "fc": "title"}}, nil)); isErr || rows != `{"data":[{"title":"Read me over REST"},{"title":"Tokens"}],"page":{"number":0,"size":2}}` {
		t.Fatalf("read: %s", rows)
	}
	// A 2026-07-28 request over stdio.
	modern := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	if dbs, isErr := text(toolCall(5, "meta_list_databases", map[string]any{}, modern)); isErr || dbs != `[{"type":"mi","schema":"app"}]` {
		t.Fatalf("databases: %s", dbs)
	}
	if m := toolCall(6, "start_ai_session", map[string]any{"name": "x", "context": "y"}, nil); m["error"] == nil {
		t.Fatalf("start_ai_session over stdio: %v", m)
	}
	if msg, isErr := text(toolCall(7, "auto_delete_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes"}, nil)); !isErr || !strings.Contains(msg, "filter") {
		t.Fatalf("unfiltered delete: %s", msg)
	}

	// End of input ends the process and its session.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp --stdio exited with %v:\n%s", err, stderr.String())
	}
	out, errOut, code := cli(t, "session", "journal", "--data-dir", dir, "--json", p.SessionID)
	var v struct {
		Session struct{ State, Name string }
		Calls   []struct{ Tool, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("journal: %d %s %s", code, out, errOut)
	}
	var tools []string
	for _, c := range v.Calls {
		tools = append(tools, c.Tool+":"+c.Outcome)
	}
	if v.Session.State != "ended" || v.Session.Name != "stdio" || strings.Join(tools, " ") != "ping:ok auto_read_rows:ok meta_list_databases:ok auto_delete_rows:INVALID" {
		t.Fatalf("stdio session %+v, calls %v", v.Session, tools)
	}

	// The credential layer applies to stdio too.
	_, errOut, code = cli(t, "mcp", "--stdio", "--token-file", filepath.Join(dir, "admin.token"), "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "kind user") {
		t.Fatalf("user token over stdio: %d %s", code, errOut)
	}
	if _, _, code := cli(t, "mcp", "--token-file", tokenFile, "--data-dir", dir); code != 2 {
		t.Fatalf("mcp without --stdio: exit %d", code)
	}
}
