package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/sessions"
)

// headerLog records the headers of every request an HTTP client sends.
type headerLog struct {
	mu   sync.Mutex
	sent []http.Header
}

func (l *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.sent = append(l.sent, r.Header.Clone())
	l.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// values returns every value the client sent in header name.
func (l *headerLog) values(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, h := range l.sent {
		out = append(out, h.Values(name)...)
	}
	return out
}

// sdkClient is mcp-go's streamable-HTTP client configured as a user
// configures one (.mcp.json "headers"): the token, once per connection.
func (g *gateway) sdkClient(ctx context.Context, token string, opts ...client.ClientOption) (*client.Client, *headerLog) {
	g.t.Helper()
	log := &headerLog{}
	tr, err := transport.NewStreamableHTTP(g.mcp.URL+mcp.Path,
		transport.WithHTTPHeaders(map[string]string{"LB-Access-Token": token}),
		transport.WithHTTPBasicClient(&http.Client{Transport: log}))
	if err != nil {
		g.t.Fatal(err)
	}
	cl := client.NewClient(tr, opts...)
	if err := cl.Start(ctx); err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { cl.Close() })
	if _, err := cl.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "session-test", Version: "1"},
	}}); err != nil {
		g.t.Fatal(err)
	}
	// A 2026-07-28 client learns from tools/list which arguments it mirrors
	// into headers.
	if _, err := cl.ListTools(ctx, mcpgo.ListToolsRequest{}); err != nil {
		g.t.Fatal(err)
	}
	return cl, log
}

// sdkCall calls a tool with the SDK and returns its text and isError.
func sdkCall(t *testing.T, ctx context.Context, cl *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cl.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		t.Fatalf("%s: content[0] is %T", name, res.Content[0])
	}
	return tc.Text, res.IsError
}

// sdkRefusal calls a tool that must be refused and returns the code.
func sdkRefusal(t *testing.T, ctx context.Context, cl *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isErr := sdkCall(t, ctx, cl, name, args)
	var r struct{ Code string }
	if !isErr || json.Unmarshal([]byte(text), &r) != nil || r.Code == "" {
		t.Fatalf("%s: want a refusal, got %s", name, text)
	}
	return r.Code
}

// dataCalls runs meta → read → insert → update → delete with the session
// named by extra (nil: none, the client's transport session carries it),
// failing on any refusal.
func dataCalls(t *testing.T, ctx context.Context, cl *client.Client, tag string, extra map[string]any) {
	t.Helper()
	with := func(args map[string]any) map[string]any {
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	must := func(name string, args map[string]any, want string) {
		t.Helper()
		text, isErr := sdkCall(t, ctx, cl, name, with(args))
		if isErr || !strings.HasPrefix(text, want) {
			t.Fatalf("%s: %s", name, text)
		}
	}
	notes := func() map[string]any { return map[string]any{"type": "mi", "schema": "app", "table": "notes"} }
	must("meta_list_tables", map[string]any{"type": "mi", "schema": "app"}, `[{"type":"mi","schema":"app","table":"notes"}]`)
	read := notes()
	read["page_size"], read["page_number"], read["query"] = 2, 0, map[string]any{"oy": "title.as", "fc": "title"}
	must("auto_read_rows", read, `{"data":[{"title":"Read me over REST"},{"title":"Tokens"}]`)
	ins := notes()
	ins["rows"] = []any{map[string]any{"title": "from " + tag}}
	must("auto_insert_rows", ins, `{"rows_affected":1,`)
	upd := notes()
	upd["query"], upd["values"] = map[string]any{"title": "eq.from " + tag}, map[string]any{"body": "b"}
	must("auto_update_rows", upd, `{"rows_affected":1}`)
	del := notes()
	del["query"] = map[string]any{"title": "eq.from " + tag}
	must("auto_delete_rows", del, `{"rows_affected":1}`)
}

// startSDK starts an AI session with the SDK and returns its id.
func startSDK(t *testing.T, ctx context.Context, cl *client.Client) string {
	t.Helper()
	text, isErr := sdkCall(t, ctx, cl, "start_ai_session", map[string]any{"name": "sdk", "context": "connection-level headers only"})
	var s struct {
		SessionID string `json:"session_id"`
	}
	if isErr || json.Unmarshal([]byte(text), &s) != nil || s.SessionID == "" {
		t.Fatalf("start_ai_session: %s", text)
	}
	return s.SessionID
}

// journalTools lists the tools of a session's journal, each with its
// outcome.
func journalTools(v sessions.View) []string {
	var out []string
	for _, c := range v.Calls {
		out = append(out, c.Tool+":"+c.Outcome)
	}
	return out
}

// TestSDKSessionsHandshake: a handshake-era client that sends only its
// token completes start_ai_session → meta → read → insert → update →
// delete: initialize issued an Mcp-Session-Id, the client echoed it, and
// the AI session started on it carries every later call, journaled.
func TestSDKSessionsHandshake(t *testing.T) {
	g := newGateway(t, time.Hour)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cl, log := g.sdkClient(ctx, g.agent, client.WithProtocolVersion(version))
			if cl.ProtocolVersion() != version {
				t.Fatalf("negotiated %s", cl.ProtocolVersion())
			}
			// Before start_ai_session there is no AI session to use.
			if code := sdkRefusal(t, ctx, cl, "ping", nil); code != sessions.CodeRequired {
				t.Fatalf("ping before start: %s", code)
			}
			sid := startSDK(t, ctx, cl)
			dataCalls(t, ctx, cl, version, nil)
			if ids := log.values(mcp.SessionHeader); len(ids) != 0 {
				t.Fatalf("the client sent X-Session-Id %v", ids)
			}
			if ids := log.values("Mcp-Session-Id"); len(ids) < 6 || ids[0] != ids[len(ids)-1] {
				t.Fatalf("Mcp-Session-Id sent: %v", ids)
			}
			v := g.journal(sid)
			want := "meta_list_tables:ok auto_read_rows:ok auto_insert_rows:ok auto_update_rows:ok auto_delete_rows:ok"
			if got := strings.Join(journalTools(v), " "); got != want {
				t.Fatalf("journal: %s", got)
			}
		})
	}
}

// TestSDKSessions2026: a 2026-07-28 client, stateless, names the session
// with the session_id argument; the SDK mirrors it into
// Mcp-Param-Session-Id because the tools declare it with x-mcp-header.
func TestSDKSessions2026(t *testing.T) {
	g := newGateway(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, log := g.sdkClient(ctx, g.agent)
	if cl.ProtocolVersion() != "2026-07-28" {
		t.Fatalf("negotiated %s", cl.ProtocolVersion())
	}
	before := g.srv.DirectCalls()
	sid := startSDK(t, ctx, cl)
	dataCalls(t, ctx, cl, "2026", map[string]any{"session_id": sid})
	if got := log.values(mcp.ParamSessionHeader); len(got) != 5 || got[0] != sid || got[4] != sid {
		t.Fatalf("Mcp-Param-Session-Id sent: %v", got)
	}
	if ids := log.values("Mcp-Session-Id"); len(ids) != 0 {
		t.Fatalf("a 2026-07-28 client sent Mcp-Session-Id %v", ids)
	}
	if n := g.srv.DirectCalls() - before; n != 6 {
		t.Fatalf("%d calls on the direct road, want 6", n)
	}
	if got := len(g.journal(sid).Calls); got != 5 {
		t.Fatalf("%d calls journaled", got)
	}
	// Without the argument (and no header) there is no session.
	if code := sdkRefusal(t, ctx, cl, "meta_list_databases", nil); code != sessions.CodeRequired {
		t.Fatalf("no session: %s", code)
	}
}

// handshake posts a handshake-era request (after initialize) on transport
// session tid with token.
func (g *gateway) handshake(token, tid string, extra map[string]string, method string, params map[string]any) reply {
	g.t.Helper()
	h := map[string]string{"LB-Access-Token": token, "MCP-Protocol-Version": "2025-11-25"}
	if tid != "" {
		h["Mcp-Session-Id"] = tid
	}
	for k, v := range extra {
		h[k] = v
	}
	return g.post(h, rpcBody(method, params))
}

// initialize runs the handshake for token and returns the Mcp-Session-Id
// issued.
func (g *gateway) initialize(token string) string {
	g.t.Helper()
	r := g.post(map[string]string{"LB-Access-Token": token}, rpcBody("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}))
	tid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || tid == "" {
		g.t.Fatalf("initialize: %d %v %s", r.status, r.header, r.raw)
	}
	return tid
}

// TestTransportSessionRefusals: a transport session id never outlives or
// widens its AI session.
func TestTransportSessionRefusals(t *testing.T) {
	g := newGateway(t, time.Hour)
	_, other := g.identity("other-agent", "mcp", []string{"admin"}, nil, auth.MintOptions{})
	tid := g.initialize(g.agent)
	if tid2 := g.initialize(g.agent); tid2 == tid {
		t.Fatal("two initializes got the same Mcp-Session-Id")
	}
	started := g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "start_ai_session",
		"arguments": map[string]any{"name": "bound", "context": "refusals"}})).ok(t)
	sid := started.object(t)["session_id"].(string)
	ping := g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}})).ok(t)
	if ping.object(t)["session_id"] != sid {
		t.Fatalf("ping on the transport session: %s", ping.text)
	}

	// Another identity's token with this transport session id: refused
	// before any JSON-RPC, as an unknown session (404).
	r := g.handshake(other, tid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}})
	if code, msg := r.httpError(t); r.status != http.StatusNotFound || code != "NOT_FOUND" || !strings.Contains(msg, "initialize") {
		t.Fatalf("other token: %d %s", r.status, r.raw)
	}
	// A forged id (the mark altered) is refused the same way.
	forged := tid[:len(tid)-1] + map[bool]string{true: "0", false: "1"}[!strings.HasSuffix(tid, "0")]
	if r := g.handshake(g.agent, forged, nil, "tools/list", map[string]any{}); r.status != http.StatusNotFound {
		t.Fatalf("forged id: %d %s", r.status, r.raw)
	}
	// The other identity's own transport session does not reach this AI
	// session, even when it names it.
	otid := g.initialize(other)
	res := g.toolReply(g.handshake(other, otid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}}))
	if code, _ := res.refusal(t); code != sessions.CodeRequired {
		t.Fatalf("other's transport session: %s", res.text)
	}
	res = g.toolReply(g.handshake(other, otid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{"session_id": sid}}))
	if code, _ := res.refusal(t); code != sessions.CodeNotFound {
		t.Fatalf("other naming the session: %s", res.text)
	}

	// session_id and Mcp-Param-Session-Id (or X-Session-Id) that differ.
	res = g.toolReply(g.handshake(g.agent, tid, map[string]string{mcp.ParamSessionHeader: "another"}, "tools/call",
		map[string]any{"name": "ping", "arguments": map[string]any{"session_id": sid}}))
	if code, msg := res.refusal(t); code != "INVALID" || !strings.Contains(msg, mcp.ParamSessionHeader) {
		t.Fatalf("param header mismatch: %s", res.text)
	}
	res = g.toolReply(g.handshake(g.agent, tid, map[string]string{mcp.SessionHeader: "another"}, "tools/call",
		map[string]any{"name": "ping", "arguments": map[string]any{"session_id": sid}}))
	if code, msg := res.refusal(t); code != "INVALID" || !strings.Contains(msg, mcp.SessionHeader) {
		t.Fatalf("X-Session-Id mismatch: %s", res.text)
	}

	// After end_ai_session the implicit session is gone: calls are refused
	// as ended, and nothing revives it.
	g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "end_ai_session", "arguments": map[string]any{}})).ok(t)
	res = g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "meta_list_databases", "arguments": map[string]any{}}))
	if code, _ := res.refusal(t); code != sessions.CodeEnded {
		t.Fatalf("after end: %s", res.text)
	}
	// A new start_ai_session binds a new AI session; the ended one stays
	// ended.
	again := g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "start_ai_session",
		"arguments": map[string]any{"name": "again", "context": "refusals"}})).ok(t)
	sid2 := again.object(t)["session_id"].(string)
	if sid2 == sid {
		t.Fatal("the ended session was revived")
	}
	g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}})).ok(t)
	if v := g.journal(sid); v.Session.State != "ended" {
		t.Fatalf("first session: %s", v.Session.State)
	}
	if got := strings.Join(journalTools(g.journal(sid2)), " "); got != "ping:ok" {
		t.Fatalf("second session's journal: %s", got)
	}

	// A 2026-07-28 request ignores Mcp-Session-Id: it carries no session.
	res = g.toolReply(g.post(map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": modern, "Mcp-Method": "tools/call",
		"Mcp-Name": "ping", "Mcp-Session-Id": tid}, rpcBody("tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}, "_meta": meta()})))
	if code, _ := res.refusal(t); code != sessions.CodeRequired {
		t.Fatalf("2026 with Mcp-Session-Id: %s", res.text)
	}
}

// TestTransportSessionExpiry: the AI session bound to a transport session
// expires as any other, and the transport session with it.
func TestTransportSessionExpiry(t *testing.T) {
	g := newGateway(t, 300*time.Millisecond)
	tid := g.initialize(g.agent)
	g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "start_ai_session",
		"arguments": map[string]any{"name": "short", "context": "expiry"}})).ok(t)
	time.Sleep(500 * time.Millisecond)
	res := g.toolReply(g.handshake(g.agent, tid, nil, "tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}}))
	if code, _ := res.refusal(t); code != sessions.CodeExpired {
		t.Fatalf("after the idle timeout: %s", res.text)
	}
}

// TestParamSessionHeader2026: under 2026-07-28 the session_id argument and
// Mcp-Param-Session-Id must agree (400, -32020 otherwise), on both roads.
func TestParamSessionHeader2026(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	for _, direct := range []bool{true, false} {
		g.srv.SetDirect(direct)
		send := func(header string, args map[string]any) reply {
			h := map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": modern, "Mcp-Method": "tools/call", "Mcp-Name": "ping"}
			if header != "" {
				h[mcp.ParamSessionHeader] = header
			}
			return g.post(h, rpcBody("tools/call", map[string]any{"name": "ping", "arguments": args, "_meta": meta()}))
		}
		for _, c := range []struct {
			name   string
			header string
			args   map[string]any
		}{
			{"different", "another", map[string]any{"session_id": sid}},
			{"header without argument", sid, map[string]any{}},
			{"argument without header", "", map[string]any{"session_id": sid}},
		} {
			r := send(c.header, c.args)
			if code, _, _ := r.rpcError(t); r.status != http.StatusBadRequest || code != -32020 {
				t.Fatalf("direct=%v %s: %d %s", direct, c.name, r.status, r.raw)
			}
		}
		res := g.toolReply(send(sid, map[string]any{"session_id": sid})).ok(t)
		if res.object(t)["session_id"] != sid {
			t.Fatalf("direct=%v: %s", direct, res.text)
		}
	}
	g.srv.SetDirect(true)
}
