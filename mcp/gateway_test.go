package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	_ "github.com/littlebitlabs/minimal/dialects/mi"
	_ "github.com/littlebitlabs/minimal/dialects/pg"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

// gateway is a whole gateway on a temporary data dir: the real store,
// engine, REST face and MCP face, each on its own loopback listener.
type gateway struct {
	t     testing.TB
	dir   string
	st    *store.Store
	key   []byte
	rest  *httptest.Server
	mcp   *httptest.Server
	srv   *mcp.Server
	agent string // token of the bootstrap identity "agent" (kind mcp, role admin)
	admin string // token of the bootstrap identity "admin" (kind user, role admin)
	proj  store.Project
	space store.Space
}

// newGateway starts a gateway whose sessions idle out after idle.
func newGateway(t testing.TB, idle time.Duration) *gateway {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ver := auth.NewVerifier(st, key)
	if _, err := bootstrap.Ensure(ctx, st, dir, key, ver, log); err != nil {
		t.Fatal(err)
	}
	aw := store.NewAuditWriter(st, 1000, log) // the audit table, as serve keeps it
	t.Cleanup(func() { _ = aw.Close(context.Background()) })
	eng, err := engine.New(ctx, st, engine.Config{Logger: log, PollInterval: 50 * time.Millisecond, Audit: aw})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	go ver.Follow(rctx)
	rest := httptest.NewServer(api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key}, api.Config{MaxBodyBytes: 1 << 16, MaxPageSize: 100, Logger: log}))
	roots, err := miniapp.ExportRoots(dir, nil, nil) // <dir>/exports, as serve's default
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: ver, Store: st, Sessions: sessions.New(st, idle), MiniApp: miniapp.Config{ExportRoots: roots}},
		mcp.Config{MaxBodyBytes: 1 << 16, MaxPageSize: 100, Version: "test", Logger: log})
	mcpSrv := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { mcpSrv.Close(); rest.Close(); cancel(); eng.Close() })
	org, _ := st.Org(ctx, bootstrap.Org)
	proj, _ := st.Project(ctx, org.ID, bootstrap.Project)
	space, _ := st.Space(ctx, proj.ID, bootstrap.Space)
	return &gateway{t: t, dir: dir, st: st, key: key, rest: rest, mcp: mcpSrv, srv: srv,
		agent: fileToken(t, dir+"/agent.token"), admin: fileToken(t, dir+"/admin.token"), proj: proj, space: space}
}

func fileToken(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// identity creates an identity of the bootstrap space and mints its token.
func (g *gateway) identity(name, kind string, roles []string, claims map[string]any, opt auth.MintOptions) (store.Identity, string) {
	g.t.Helper()
	ctx := context.Background()
	id, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: g.space.ID, Name: name, Kind: kind,
		Roles: roles, KeyType: "crud", Claims: claims, Enabled: true})
	if err != nil {
		g.t.Fatal(err)
	}
	tok, err := auth.Mint(ctx, g.st, g.key, id, opt)
	if err != nil {
		g.t.Fatal(err)
	}
	return id, tok
}

// reply is an HTTP answer of the MCP endpoint.
type reply struct {
	status int
	header http.Header
	raw    []byte
}

// json decodes the body as one JSON object (numbers exact).
func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object (%v), status %d: %s", err, r.status, r.raw)
	}
	return m
}

// rpcError returns the JSON-RPC error code and message, failing when the
// answer is not a JSON-RPC error.
func (r reply) rpcError(t testing.TB) (int64, string, map[string]any) {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("not a JSON-RPC error (status %d): %s", r.status, r.raw)
	}
	code, err := e["code"].(json.Number).Int64()
	if err != nil || m["jsonrpc"] != "2.0" {
		t.Fatalf("malformed JSON-RPC error: %s", r.raw)
	}
	data, _ := e["data"].(map[string]any)
	return code, e["message"].(string), data
}

// httpError returns the code and message of the gateway's HTTP error
// envelope.
func (r reply) httpError(t testing.TB) (string, string) {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope (status %d): %s", r.status, r.raw)
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code, msg
}

// post sends a raw request to the MCP endpoint.
func (g *gateway) post(headers map[string]string, body string) reply {
	g.t.Helper()
	return g.send(http.MethodPost, mcp.Path, headers, body)
}

// postUntil posts until the answer has the given status, for at most three
// seconds (a change to the store reaches the credential layer within about
// one), and returns the last answer.
func (g *gateway) postUntil(headers map[string]string, body string, status int) reply {
	g.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := g.post(headers, body)
		if r.status == status || time.Now().After(deadline) {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (g *gateway) send(method, path string, headers map[string]string, body string) reply {
	g.t.Helper()
	req, err := http.NewRequest(method, g.mcp.URL+path, strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := g.mcp.Client().Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, raw: b}
}

const modern = "2026-07-28"

// meta is the _meta every 2026-07-28 request carries.
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modern,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-test", "version": "1"},
	}
}

// rpcBody encodes a JSON-RPC request.
func rpcBody(method string, params map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

// call sends a well-formed 2026-07-28 request: _meta and every header the
// revision requires.
func (g *gateway) call(token, session, method string, params map[string]any) reply {
	g.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = meta()
	h := map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": method}
	if token != "" {
		h["LB-Access-Token"] = token
	}
	if session != "" {
		h[mcp.SessionHeader] = session
	}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		h["Mcp-Name"] = name
	}
	return g.post(h, rpcBody(method, params))
}

// toolResult is the result of a tools/call.
type toolResult struct {
	isError    bool
	text       string
	structured map[string]any
}

// value decodes the text answer (numbers exact).
func (r toolResult) value(t testing.TB) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(r.text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("tool answer is not JSON: %q", r.text)
	}
	return v
}

func (r toolResult) object(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.value(t).(map[string]any)
	if !ok {
		t.Fatalf("tool answer is not an object: %s", r.text)
	}
	return m
}

// refusal returns the code and message of an isError result.
func (r toolResult) refusal(t testing.TB) (string, string) {
	t.Helper()
	if !r.isError {
		t.Fatalf("tool succeeded, want a refusal: %s", r.text)
	}
	m := r.object(t)
	if len(m) != 2 || m["code"] == nil || m["message"] == nil {
		t.Fatalf("refusal is not {code, message}: %s", r.text)
	}
	return m["code"].(string), m["message"].(string)
}

// ok fails unless the call succeeded.
func (r toolResult) ok(t testing.TB) toolResult {
	t.Helper()
	if r.isError {
		t.Fatalf("tool refused: %s", r.text)
	}
	return r
}

// tool calls a tool over 2026-07-28 and decodes its result; a JSON-RPC
// error fails the test.
func (g *gateway) tool(token, session, name string, args any) toolResult {
	g.t.Helper()
	r := g.call(token, session, "tools/call", map[string]any{"name": name, "arguments": args})
	return g.toolReply(r)
}

func (g *gateway) toolReply(r reply) toolResult {
	g.t.Helper()
	if r.status != 200 {
		g.t.Fatalf("tools/call: status %d: %s", r.status, r.raw)
	}
	m := r.json(g.t)
	res, ok := m["result"].(map[string]any)
	if !ok {
		g.t.Fatalf("tools/call: no result: %s", r.raw)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		g.t.Fatalf("tools/call: want one content block: %s", r.raw)
	}
	c0 := content[0].(map[string]any)
	if c0["type"] != "text" {
		g.t.Fatalf("content[0] is not text: %s", r.raw)
	}
	out := toolResult{text: c0["text"].(string), isError: res["isError"] == true}
	out.structured, _ = res["structuredContent"].(map[string]any)
	// A refusal has no structured content (what a tool's output schema
	// describes is its answer); an answer has it when the tool declares an
	// output schema (TestTypedOutputs checks each one).
	if out.isError && res["structuredContent"] != nil {
		g.t.Fatalf("tools/call: a refusal with structuredContent: %s", r.raw)
	}
	return out
}

// start starts a session and returns its id.
func (g *gateway) start(token string) string {
	g.t.Helper()
	r := g.tool(token, "", "start_ai_session", map[string]any{"name": "test", "context": "exercise the tools"}).ok(g.t)
	id, _ := r.object(g.t)["session_id"].(string)
	if id == "" {
		g.t.Fatalf("no session_id in %s", r.text)
	}
	return id
}

// restDo sends a REST request with a token.
func (g *gateway) restDo(method, path, token string, body any) reply {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.rest.URL+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("LB-Access-Token", token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.rest.Client().Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, raw: b}
}

// journal reads a session's journal through the admin API.
func (g *gateway) journal(session string) sessions.View {
	g.t.Helper()
	r := g.restDo("GET", "/minimal/api/admin/v1/sessions/"+session+"/journal", g.admin, nil)
	if r.status != 200 {
		g.t.Fatalf("journal: %d %s", r.status, r.raw)
	}
	var v sessions.View
	if err := json.Unmarshal(r.raw, &v); err != nil {
		g.t.Fatal(err)
	}
	return v
}
