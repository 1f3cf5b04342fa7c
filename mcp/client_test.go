package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/mcp"
)

// TestMCPGoClient drives the endpoint with mcp-go's own client, once on
// 2026-07-28 (server/discover, stateless requests) and once on the
// handshake a 2025-11-25 client performs.
func TestMCPGoClient(t *testing.T) {
	g := newGateway(t, time.Hour)
	for _, c := range []struct {
		name string
		opts []client.ClientOption
		want string
	}{
		{"2026-07-28", nil, "2026-07-28"},
		{"handshake", []client.ClientOption{client.WithProtocolVersion("2025-11-25")}, "2025-11-25"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tr, err := transport.NewStreamableHTTP(g.mcp.URL+mcp.Path, transport.WithHTTPHeaders(map[string]string{"LB-Access-Token": g.agent}))
			if err != nil {
				t.Fatal(err)
			}
			cl := client.NewClient(tr, c.opts...)
			if err := cl.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			init, err := cl.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
				ClientInfo: mcpgo.Implementation{Name: "mcp-go-test", Version: "1"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if init.ProtocolVersion != c.want || cl.ProtocolVersion() != c.want || init.ServerInfo.Name != "minimal" || !strings.Contains(init.Instructions, "start_ai_session") {
				t.Fatalf("negotiated %s (%s), server %v", init.ProtocolVersion, cl.ProtocolVersion(), init.ServerInfo)
			}
			tools, err := cl.ListTools(ctx, mcpgo.ListToolsRequest{})
			if err != nil || len(tools.Tools) != 32 { // 11 table tools, 21 mini-app tools (not reload; no custom API to call)
				t.Fatalf("tools/list: %v, %d tools", err, len(tools.Tools))
			}

			callTool := func(session, name string, args map[string]any) *mcpgo.CallToolResult {
				t.Helper()
				req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}}
				if session != "" {
					req.Header = http.Header{mcp.SessionHeader: {session}}
				}
				res, err := cl.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			text := func(res *mcpgo.CallToolResult) string {
				t.Helper()
				tc, ok := res.Content[0].(mcpgo.TextContent)
				if !ok {
					t.Fatalf("content[0] is %T", res.Content[0])
				}
				return tc.Text
			}

			res := callTool("", "start_ai_session", map[string]any{"name": "mcp-go", "context": "client test"})
			var started struct {
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal([]byte(text(res)), &started); err != nil || started.SessionID == "" || res.IsError {
				t.Fatalf("start: %s", text(res))
			}
			sid := started.SessionID
			if res := callTool(sid, "meta_list_tables", map[string]any{"type": "mi", "schema": "app"}); res.IsError || text(res) != `[{"type":"mi","schema":"app","table":"notes"}]` {
				t.Fatalf("tables: %s", text(res))
			}
			res = callTool(sid, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 5, "page_number": 0,
				"query": map[string]any{"oy": "title.as", "fc": "title"}})
			if res.IsError || !strings.HasPrefix(text(res), `{"data":[{"title":"Read me over REST"},{"title":"Tokens"},{"title":"Welcome to Minimal"}`) {
				t.Fatalf("read: %s", text(res))
			}
			if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["page"] == nil {
				t.Fatalf("structuredContent %#v", res.StructuredContent)
			}
			ins := callTool(sid, "auto_insert_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes", "rows": []any{map[string]any{"title": "from " + c.name}}})
			if ins.IsError || !strings.HasPrefix(text(ins), `{"rows_affected":1,`) {
				t.Fatalf("insert: %s", text(ins))
			}
			upd := callTool(sid, "auto_update_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
				"query": map[string]any{"title": "eq.from " + c.name}, "values": map[string]any{"body": "b"}})
			del := callTool(sid, "auto_delete_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
				"query": map[string]any{"title": "eq.from " + c.name}})
			if text(upd) != `{"rows_affected":1}` || text(del) != `{"rows_affected":1}` {
				t.Fatalf("update %s, delete %s", text(upd), text(del))
			}
			// A refusal reaches the client as a result with isError.
			bad := callTool(sid, "auto_delete_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes"})
			if !bad.IsError || !strings.Contains(text(bad), `"code":"INVALID"`) {
				t.Fatalf("unfiltered delete: %s", text(bad))
			}
			// An unknown tool is a JSON-RPC error.
			if _, err := cl.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "nope"}}); err == nil {
				t.Fatal("unknown tool succeeded")
			}
			if got := len(g.journal(sid).Calls); got != 6 {
				t.Fatalf("%d calls journaled, want 6", got)
			}
		})
	}
}
