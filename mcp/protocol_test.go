package mcp_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/mcp"
)

func TestDiscover(t *testing.T) {
	g := newGateway(t, time.Hour)
	r := g.call(g.agent, "", "server/discover", nil)
	if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("discover: %d %v %s", r.status, r.header, r.raw)
	}
	res := r.json(t)["result"].(map[string]any)
	var versions []string
	for _, v := range res["supportedVersions"].([]any) {
		versions = append(versions, v.(string))
	}
	if !slices.Equal(versions, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}) {
		t.Errorf("supportedVersions = %v", versions)
	}
	if res["instructions"] != mcp.Instructions || !strings.Contains(mcp.Instructions, "start_ai_session") {
		t.Errorf("instructions = %v", res["instructions"])
	}
	if res["resultType"] != "complete" || res["cacheScope"] == nil || res["ttlMs"] == nil {
		t.Errorf("result metadata missing: %s", r.raw)
	}
	info := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "minimal" || info["version"] != "test" {
		t.Errorf("serverInfo = %v", info)
	}
	if _, ok := res["capabilities"].(map[string]any)["tools"]; !ok {
		t.Errorf("no tools capability: %s", r.raw)
	}
}

// TestHeaderRules checks the HTTP rules of 2026-07-28 — MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, the _meta fields — and their statuses and codes.
func TestHeaderRules(t *testing.T) {
	g := newGateway(t, time.Hour)
	full := func(method string, params map[string]any, drop ...string) (map[string]string, string) {
		p := map[string]any{"_meta": meta()}
		for k, v := range params {
			p[k] = v
		}
		m := p["_meta"].(map[string]any)
		for _, d := range drop {
			delete(m, d)
		}
		h := map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": modern, "Mcp-Method": method}
		if name, ok := params["name"].(string); ok {
			h["Mcp-Name"] = name
		}
		return h, rpcBody(method, p)
	}
	help := map[string]any{"name": "help", "arguments": map[string]any{}}
	type tc struct {
		name    string
		edit    func(h map[string]string) // headers to change
		method  string
		params  map[string]any
		drop    []string // _meta keys to drop
		status  int
		code    int64
		mention string
	}
	cases := []tc{
		{name: "missing MCP-Protocol-Version", edit: func(h map[string]string) { delete(h, "MCP-Protocol-Version") },
			method: "tools/list", status: 400, code: -32020, mention: "Mcp-Protocol-Version"},
		{name: "MCP-Protocol-Version differs from _meta", edit: func(h map[string]string) { h["MCP-Protocol-Version"] = "2025-11-25" },
			method: "tools/list", status: 400, code: -32020, mention: "does not match"},
		{name: "_meta without protocolVersion", method: "tools/list", drop: []string{"io.modelcontextprotocol/protocolVersion"},
			status: 400, code: -32602, mention: "protocolVersion"},
		{name: "_meta without clientCapabilities", method: "tools/list", drop: []string{"io.modelcontextprotocol/clientCapabilities"},
			status: 400, code: -32602, mention: "clientCapabilities"},
		{name: "missing Mcp-Method", edit: func(h map[string]string) { delete(h, "Mcp-Method") },
			method: "tools/list", status: 400, code: -32020, mention: "Mcp-Method"},
		{name: "Mcp-Method differs from method", edit: func(h map[string]string) { h["Mcp-Method"] = "tools/list" },
			method: "tools/call", params: help, status: 400, code: -32020, mention: "Mcp-Method"},
		{name: "missing Mcp-Name on tools/call", edit: func(h map[string]string) { delete(h, "Mcp-Name") },
			method: "tools/call", params: help, status: 400, code: -32020, mention: "Mcp-Name"},
		{name: "Mcp-Name differs from params.name", edit: func(h map[string]string) { h["Mcp-Name"] = "ping" },
			method: "tools/call", params: help, status: 400, code: -32020, mention: "Mcp-Name"},
		{name: "Mcp-Name in base64 form", edit: func(h map[string]string) {
			h["Mcp-Name"] = "=?base64?" + base64.StdEncoding.EncodeToString([]byte("help")) + "?="
		}, method: "tools/call", params: help, status: 200},
		{name: "unsupported version", edit: func(h map[string]string) { h["MCP-Protocol-Version"] = "2099-01-01" },
			method: "tools/list", status: 400, code: -32022},
		{name: "unknown method", method: "resources/frobnicate", status: 404, code: -32601},
		{name: "initialize is gone in 2026-07-28", method: "initialize", params: map[string]any{"protocolVersion": modern, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}},
			status: 404, code: -32601},
		{name: "ping method is gone in 2026-07-28", method: "ping", status: 404, code: -32601},
		{name: "well-formed", method: "tools/list", status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, body := full(c.method, c.params, c.drop...)
			if c.name == "unsupported version" {
				body = strings.Replace(body, modern, "2099-01-01", 1)
			}
			if c.edit != nil {
				c.edit(h)
			}
			r := g.post(h, body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.raw)
			}
			if c.code == 0 {
				if _, ok := r.json(t)["result"]; !ok {
					t.Fatalf("no result: %s", r.raw)
				}
				return
			}
			code, msg, data := r.rpcError(t)
			if code != c.code || !strings.Contains(msg, c.mention) {
				t.Fatalf("error %d %q, want %d mentioning %q", code, msg, c.code, c.mention)
			}
			if c.code == -32022 {
				checkUnsupported(t, data, "2099-01-01")
			}
		})
	}

	// A handshake-era request naming an unknown version in the header is
	// refused the same way.
	r := g.post(map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": "2024-01-01"}, rpcBody("tools/list", map[string]any{}))
	if r.status != 400 {
		t.Fatalf("handshake-era unknown version: %d %s", r.status, r.raw)
	}
	code, _, data := r.rpcError(t)
	if code != -32022 {
		t.Fatalf("code %d", code)
	}
	checkUnsupported(t, data, "2024-01-01")
}

func checkUnsupported(t *testing.T, data map[string]any, requested string) {
	t.Helper()
	var sup []string
	for _, v := range data["supported"].([]any) {
		sup = append(sup, v.(string))
	}
	if !slices.Equal(sup, mcp.SupportedVersions) || data["requested"] != requested {
		t.Fatalf("data = %v", data)
	}
}

// TestHandshakeVersions runs today's clients' flow — initialize, then
// requests carrying the negotiated version — for every handshake version.
func TestHandshakeVersions(t *testing.T) {
	g := newGateway(t, time.Hour)
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(v, func(t *testing.T) {
			h := map[string]string{"LB-Access-Token": g.agent}
			init := rpcBody("initialize", map[string]any{"protocolVersion": v, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "raw-test", "version": "1"}})
			r := g.post(h, init)
			if r.status != 200 {
				t.Fatalf("initialize: %d %s", r.status, r.raw)
			}
			res := r.json(t)["result"].(map[string]any)
			if res["protocolVersion"] != v || res["instructions"] != mcp.Instructions {
				t.Fatalf("initialize result %s", r.raw)
			}
			if si := res["serverInfo"].(map[string]any); si["name"] != "minimal" {
				t.Fatalf("serverInfo %v", si)
			}
			if r := g.post(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != 202 {
				t.Fatalf("initialized: %d %s", r.status, r.raw)
			}
			// 2025-03-26 clients send no version header; later ones do.
			if v != "2025-03-26" {
				h["MCP-Protocol-Version"] = v
			}
			r = g.post(h, rpcBody("tools/list", map[string]any{}))
			tools := r.json(t)["result"].(map[string]any)["tools"].([]any)
			if len(tools) != 32 { // 11 table tools, 21 mini-app tools (not reload; no custom API to call)
				t.Fatalf("tools/list: %d tools: %s", len(tools), r.raw)
			}
			r = g.post(h, rpcBody("tools/call", map[string]any{"name": "start_ai_session", "arguments": map[string]any{"name": "n", "context": "c"}}))
			sid := g.toolReply(r).ok(t).object(t)["session_id"].(string)
			h[mcp.SessionHeader] = sid
			r = g.post(h, rpcBody("tools/call", map[string]any{"name": "ping", "arguments": map[string]any{}}))
			if p := g.toolReply(r).ok(t).object(t); p["session_id"] != sid || p["identity"] != "agent" {
				t.Fatalf("ping %v", p)
			}
			if r := g.post(h, rpcBody("ping", nil)); r.status != 200 {
				t.Fatalf("ping method: %d %s", r.status, r.raw)
			}
		})
	}
	// A version the server does not serve is answered with the newest
	// handshake version.
	for _, asked := range []string{"2024-11-05", modern, "1999-01-01"} {
		r := g.post(map[string]string{"LB-Access-Token": g.agent}, rpcBody("initialize", map[string]any{"protocolVersion": asked,
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}))
		if got := r.json(t)["result"].(map[string]any)["protocolVersion"]; got != "2025-11-25" {
			t.Errorf("initialize %s answered %v", asked, got)
		}
	}
}

func TestHTTPSurface(t *testing.T) {
	g := newGateway(t, time.Hour)
	for _, m := range []string{"GET", "DELETE", "PUT"} {
		r := g.send(m, mcp.Path, map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": modern}, "")
		if r.status != 405 || r.header.Get("Allow") != "POST" {
			t.Errorf("%s: %d allow %q", m, r.status, r.header.Get("Allow"))
		}
		if code, _ := r.httpError(t); code != "METHOD_NOT_ALLOWED" {
			t.Errorf("%s: code %s", m, code)
		}
	}
	r := g.send("POST", "/mcp", map[string]string{"LB-Access-Token": g.agent}, "{}")
	if code, msg := r.httpError(t); r.status != 404 || code != "NOT_FOUND" || !strings.Contains(msg, mcp.Path) {
		t.Errorf("other path: %d %s", r.status, r.raw)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 1<<16) + `"}}`
	r = g.post(map[string]string{"LB-Access-Token": g.agent}, big)
	if code, _ := r.httpError(t); r.status != 413 || code != "TOO_LARGE" {
		t.Errorf("big body: %d %s", r.status, r.raw)
	}
}

// TestCredentialLayer checks the refusals made before any JSON-RPC is read.
func TestCredentialLayer(t *testing.T) {
	g := newGateway(t, time.Hour)
	_, service := g.identity("svc", "service", []string{"admin"}, nil, auth.MintOptions{})
	_, revoked := g.identity("gone", "mcp", []string{"admin"}, nil, auth.MintOptions{})
	body := rpcBody("tools/list", map[string]any{"_meta": meta()})
	hdr := func(kv ...string) map[string]string {
		h := map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "tools/list"}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	type tc struct {
		name    string
		h       map[string]string
		body    string
		status  int
		code    string
		mention string
	}
	cases := []tc{
		{"no token", hdr(), body, 401, "UNAUTHENTICATED", "LB-Access-Token"},
		{"no token, body not even JSON", hdr(), "garbage", 401, "UNAUTHENTICATED", "missing access token"},
		{"garbage token", hdr("LB-Access-Token", "not.a.token"), body, 401, "UNAUTHENTICATED", "invalid access token"},
		{"wrong Authorization scheme", hdr("Authorization", "Basic "+g.agent), body, 401, "UNAUTHENTICATED", "Bearer"},
		{"user identity", hdr("LB-Access-Token", g.admin), body, 403, "FORBIDDEN", "kind user"},
		{"service identity", hdr("LB-Access-Token", service), body, 403, "FORBIDDEN", "kind service"},
		{"mcp identity", hdr("LB-Access-Token", g.agent), body, 200, "", ""},
		{"Authorization: Bearer", hdr("Authorization", "Bearer "+g.agent), body, 200, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := g.post(c.h, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.raw)
			}
			if c.code == "" {
				return
			}
			code, msg := r.httpError(t)
			if code != c.code || !strings.Contains(msg, c.mention) {
				t.Fatalf("%s %q, want %s mentioning %q", code, msg, c.code, c.mention)
			}
			if c.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	// MCP switched off for the space refuses its mcp identities; on again
	// admits them.
	ctx := context.Background()
	if err := g.st.SetSpaceMCP(ctx, g.space.ID, false); err != nil {
		t.Fatal(err)
	}
	// The switch reaches live tokens like a disabled identity: within the
	// verifier's one-second cache, at once when the write's announcement
	// has been followed.
	r := g.postUntil(hdr("LB-Access-Token", g.agent), body, 403)
	if code, msg := r.httpError(t); r.status != 403 || code != "FORBIDDEN" || !strings.Contains(msg, `MCP is switched off for space "main"`) {
		t.Fatalf("MCP off: %d %s", r.status, r.raw)
	}
	if err := g.st.SetSpaceMCP(ctx, g.space.ID, true); err != nil {
		t.Fatal(err)
	}
	if r := g.postUntil(hdr("LB-Access-Token", g.agent), body, 200); r.status != 200 {
		t.Fatalf("MCP on again: %d %s", r.status, r.raw)
	}

	// A revoked token is refused within seconds.
	p, err := auth.NewVerifier(g.st, g.key).Verify(ctx, revoked)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.st.RevokeToken(ctx, p.TokenID, p.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := g.post(hdr("LB-Access-Token", revoked), body)
		if r.status == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked token still admitted: %d", r.status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDNSRebinding: on a loopback listener the Host and Origin must name
// loopback, before anything else is looked at.
func TestDNSRebinding(t *testing.T) {
	g := newGateway(t, time.Hour)
	body := rpcBody("tools/list", map[string]any{"_meta": meta()})
	port := g.mcp.URL[strings.LastIndex(g.mcp.URL, ":"):]
	for _, c := range []struct {
		name   string
		h      map[string]string
		status int
	}{
		{"foreign Host", map[string]string{"Host": "evil.example" + port}, 403},
		{"foreign Host, no token", map[string]string{"Host": "evil.example"}, 403},
		{"foreign Origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"opaque Origin", map[string]string{"Origin": "null"}, 403},
		{"localhost Host", map[string]string{"Host": "localhost" + port}, 200},
		{"loopback Origin", map[string]string{"Origin": "http://localhost:6274"}, 200},
		{"IPv6 loopback Origin", map[string]string{"Origin": "http://[::1]:6274"}, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "tools/list"}
			if !strings.Contains(c.name, "no token") {
				h["LB-Access-Token"] = g.agent
			}
			for k, v := range c.h {
				h[k] = v
			}
			r := g.post(h, body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.raw)
			}
			if c.status == 403 {
				if code, msg := r.httpError(t); code != "FORBIDDEN" || !strings.Contains(msg, "DNS rebinding") {
					t.Fatalf("%s %q", code, msg)
				}
			}
		})
	}
}

// TestUnknownTool: a tool name that does not exist is a JSON-RPC error, not
// a tool result.
func TestUnknownTool(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	r := g.call(g.agent, sid, "tools/call", map[string]any{"name": "drop_everything", "arguments": map[string]any{}})
	code, msg, _ := r.rpcError(t)
	if r.status != 400 || code != -32602 || !strings.Contains(msg, "drop_everything") {
		t.Fatalf("%d %d %q", r.status, code, msg)
	}
	// The handshake era answers the same error with 200.
	h := map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": "2025-06-18"}
	r = g.post(h, rpcBody("tools/call", map[string]any{"name": "drop_everything", "arguments": map[string]any{}}))
	if code, _, _ := r.rpcError(t); r.status != 200 || code != -32602 {
		t.Fatalf("handshake era: %d %d", r.status, code)
	}
}
