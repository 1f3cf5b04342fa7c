package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// stdioJournal reads a session's journal with the CLI: its state and each
// call as tool:outcome.
func stdioJournal(t *testing.T, dir, sid string) (string, []string) {
	t.Helper()
	out, errOut, code := cli(t, "session", "journal", "--data-dir", dir, "--json", sid)
	var v struct {
		Session struct{ State string }
		Calls   []struct{ Tool, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("journal: %d %s %s", code, out, errOut)
	}
	var calls []string
	for _, c := range v.Calls {
		calls = append(calls, c.Tool+":"+c.Outcome)
	}
	return v.Session.State, calls
}

// TestMCPStdioSDK drives `minimal mcp --stdio --token-file` with mcp-go's
// stdio client, as a local agent's configuration starts it: meta → read →
// insert → update → delete in the process's implicit session, journaled.
func TestMCPStdioSDK(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir) // bootstraps the data dir; keeps serving alongside
	defer s.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := client.NewStdioMCPClient(binary, nil, "mcp", "--stdio", "--token-file", filepath.Join(dir, "agent.token"), "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "stdio-sdk", Version: "1"},
	}}); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any, want string) string {
		t.Helper()
		res, err := cl.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(mcpgo.TextContent).Text
		if res.IsError || !strings.HasPrefix(text, want) {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	var p struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(call("ping", map[string]any{}, `{"ok":true`)), &p); err != nil || p.SessionID == "" {
		t.Fatalf("ping: %v", err)
	}
	notes := func(kv ...any) map[string]any {
		m := map[string]any{"type": "mi", "schema": "app", "table": "notes"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	call("meta_list_tables", map[string]any{"type": "mi", "schema": "app"}, `[{"type":"mi","schema":"app","table":"notes"}]`)
	call("auto_read_rows", notes("page_size", 2, "page_number", 0, "query", map[string]any{"oy": "title.as", "fc": "title"}), `{"data":[{"title":"Read me over REST"},{"title":"Tokens"}]`)
	call("auto_insert_rows", notes("rows", []any{map[string]any{"title": "from stdio"}}), `{"rows_affected":1,`)
	call("auto_update_rows", notes("query", map[string]any{"title": "eq.from stdio"}, "values", map[string]any{"body": "b"}), `{"rows_affected":1}`)
	call("auto_delete_rows", notes("query", map[string]any{"title": "eq.from stdio"}), `{"rows_affected":1}`)
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	state, calls := stdioJournal(t, dir, p.SessionID)
	if want := "ping:ok meta_list_tables:ok auto_read_rows:ok auto_insert_rows:ok auto_update_rows:ok auto_delete_rows:ok"; state != "ended" || strings.Join(calls, " ") != want {
		t.Fatalf("session %s, journal %v", state, calls)
	}
}

// TestMCPStdioEndOfInput: when stdin closes while a call runs, the call
// finishes — its answer written, its journal entry and outcome committed —
// before the process exits. Each round sends a write and closes stdin at
// once.
func TestMCPStdioEndOfInput(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	tokenFile := filepath.Join(dir, "agent.token")
	const rounds = 20
	for i := range rounds {
		cmd := exec.Command(binary, "mcp", "--stdio", "--token-file", tokenFile, "--data-dir", dir)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		logs := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(stderr)
			logs <- string(b)
		}()
		title := fmt.Sprintf("end of input %d", i)
		lines := []map[string]any{
			{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "eof", "version": "1"}}},
			{"jsonrpc": "2.0", "method": "notifications/initialized"},
			{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "auto_insert_rows", "arguments": map[string]any{
				"type": "mi", "schema": "app", "table": "notes", "rows": []any{map[string]any{"title": title}}}}},
		}
		var in strings.Builder
		for _, l := range lines {
			b, _ := json.Marshal(l)
			in.Write(append(b, '\n'))
		}
		if _, err := io.WriteString(stdin, in.String()); err != nil {
			t.Fatal(err)
		}
		stdin.Close() // at once: the call is still running

		var answer map[string]any
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] == float64(2) {
				answer = m
			}
		}
		waitErr := cmd.Wait()
		errOut := <-logs
		if waitErr != nil {
			t.Fatalf("round %d: exit %v:\n%s", i, waitErr, errOut)
		}
		res, _ := answer["result"].(map[string]any)
		if res == nil || res["isError"] == true {
			t.Fatalf("round %d: answer %v\n%s", i, answer, errOut)
		}
		if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, `{"rows_affected":1,`) {
			t.Fatalf("round %d: %s", i, text)
		}
		// The process's session, from its log; its journal has the call's
		// outcome.
		var sid string
		for _, line := range strings.Split(errOut, "\n") {
			var rec struct{ Msg, Session string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving MCP on stdio" {
				sid = rec.Session
			}
		}
		if sid == "" {
			t.Fatalf("round %d: no session in the log:\n%s", i, errOut)
		}
		if state, calls := stdioJournal(t, dir, sid); state != "ended" || strings.Join(calls, " ") != "auto_insert_rows:ok" {
			t.Fatalf("round %d: session %s, journal %v\n%s", i, state, calls, errOut)
		}
	}
}
