package mcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/mcp"
)

// eras are the protocol versions of the endpoint, as a request shows them:
// 2025-03-26 clients send no version header.
var eras = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// rpcPost sends body as a request of version v (headers, and _meta for
// 2026-07-28 where meta is true) with X-Session-Id session.
func (g *gateway) rpcPost(v, session, method, name, body string, extra map[string]string) reply {
	g.t.Helper()
	h := map[string]string{"LB-Access-Token": g.agent}
	if session != "" {
		h["X-Session-Id"] = session
	}
	if v != "2025-03-26" {
		h["MCP-Protocol-Version"] = v
	}
	if v == modern {
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
	}
	for k, x := range extra {
		h[k] = x
	}
	return g.post(h, body)
}

// metaOf is the params._meta member of a request of version v ("" before
// 2026-07-28).
func metaOf(v string) string {
	if v != modern {
		return ""
	}
	b, _ := json.Marshal(meta())
	return `"_meta":` + string(b)
}

// params joins params members, adding _meta for 2026-07-28.
func params(v string, members ...string) string {
	if m := metaOf(v); m != "" {
		members = append(members, m)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// TestJSONRPCRules: the JSON-RPC rules of each protocol version, over
// HTTP, on both roads of 2026-07-28.
func TestJSONRPCRules(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	for _, v := range eras {
		for _, direct := range []bool{true, false} {
			if v != modern && !direct {
				continue // one road before 2026-07-28
			}
			g.srv.SetDirect(direct)
			label := fmt.Sprintf("%s direct=%v", v, direct)
			ping := func(id string) string {
				return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params(v, `"name":"ping"`, `"arguments":{}`) + `}`
			}

			// A batch: served under 2025-03-26 only; -32600 (not -32700) later.
			batch := `[` + ping("1") + `,{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params(v) + `},` +
				`{"jsonrpc":"2.0","method":"notifications/initialized"},7]`
			r := g.rpcPost(v, sid, "tools/call", "ping", batch, nil)
			if v == "2025-03-26" {
				var answers []map[string]any
				if err := json.Unmarshal(r.raw, &answers); err != nil || r.status != 200 || len(answers) != 3 {
					t.Fatalf("%s batch: %d %s", label, r.status, r.raw)
				}
				res0, _ := answers[0]["result"].(map[string]any)
				res1, _ := answers[1]["result"].(map[string]any)
				e2, _ := answers[2]["error"].(map[string]any)
				if answers[0]["id"] != float64(1) || res0 == nil || res0["isError"] == true || answers[1]["id"] != float64(2) || res1["tools"] == nil ||
					e2["code"] != float64(-32600) || answers[2]["id"] != nil {
					t.Fatalf("%s batch answers: %s", label, r.raw)
				}
			} else if code, msg, _ := r.rpcError(t); r.status != 400 || code != -32600 || !strings.Contains(msg, "batch") {
				t.Fatalf("%s batch: %d %s", label, r.status, r.raw)
			}

			// A method that is not a string.
			r = g.rpcPost(v, sid, "tools/call", "ping", `{"jsonrpc":"2.0","id":7,"method":5,"params":`+params(v, `"name":"ping"`)+`}`, nil)
			if code, _, _ := r.rpcError(t); r.status != 400 || code != -32600 || r.json(t)["id"] != json.Number("7") {
				t.Fatalf("%s method 5: %d %s", label, r.status, r.raw)
			}

			// "id": null is an invalid request, not a notification.
			r = g.rpcPost(v, sid, "tools/call", "ping", ping("null"), nil)
			if code, _, _ := r.rpcError(t); r.status != 400 || code != -32600 || r.json(t)["id"] != nil {
				t.Fatalf("%s id null: %d %s", label, r.status, r.raw)
			}

			// Numeric ids past 2^53 are echoed exactly.
			for _, id := range []string{"9007199254740993", "-9007199254740993", "123456789012345678901234567890"} {
				r = g.rpcPost(v, sid, "tools/call", "ping", ping(id), nil)
				if r.status != 200 || !strings.HasPrefix(string(r.raw), `{"jsonrpc":"2.0","id":`+id+`,"result":`) || g.toolReply(r).isError {
					t.Fatalf("%s id %s: %d %s", label, id, r.status, r.raw)
				}
			}

			// A Content-Type other than JSON is 415.
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
				r = g.rpcPost(v, sid, "tools/call", "ping", ping("1"), map[string]string{"Content-Type": ct})
				if code, _ := r.httpError(t); r.status != http.StatusUnsupportedMediaType || code != "UNSUPPORTED" {
					t.Fatalf("%s Content-Type %q: %d %s", label, ct, r.status, r.raw)
				}
			}
			// With a charset it is JSON.
			r = g.rpcPost(v, sid, "tools/call", "ping", ping("1"), map[string]string{"Content-Type": "application/json; charset=utf-8"})
			g.toolReply(r).ok(t)
		}
	}
	g.srv.SetDirect(true)
}

// goTypes matches what only Go's decoder says: Go type names and its
// wording.
var goTypes = regexp.MustCompile(`Go (struct|value)|unmarshal|u?int(8|16|32|64)|float(32|64)|\bmap\[|\[\]|miniapp\.|mcp\.`)

// TestBadArgumentsEveryTool: a wrong type, a missing required argument or
// an unknown one, for every tool the gateway lists, is a result with
// isError true and code INVALID naming the argument — never a JSON-RPC
// error, never a Go type — on both roads.
func TestBadArgumentsEveryTool(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	var list struct {
		Result struct {
			Tools []struct {
				Name        string
				InputSchema struct {
					Properties map[string]struct{ Type any }
					Required   []string
				}
			}
		}
	}
	if err := json.Unmarshal(g.call(g.agent, sid, "tools/list", nil).raw, &list); err != nil || len(list.Result.Tools) < 30 {
		t.Fatalf("tools/list: %v %d", err, len(list.Result.Tools))
	}
	for _, v := range []string{"2025-11-25", modern} {
		for _, tl := range list.Result.Tools {
			if tl.Name == "end_ai_session" {
				continue
			}
			call := func(what string, args map[string]any) (string, string) {
				t.Helper()
				b, _ := json.Marshal(args)
				var extra map[string]string
				if s, ok := args["session_id"]; ok && v == modern {
					extra = map[string]string{mcp.ParamSessionHeader: fmt.Sprint(s)} // as a 2026-07-28 client mirrors it
				}
				r := g.rpcPost(v, sid, "tools/call", tl.Name, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params(v, `"name":"`+tl.Name+`"`, `"arguments":`+string(b))+`}`, extra)
				res := g.toolReply(r)
				code, msg := res.refusal(t)
				if code != "INVALID" || goTypes.MatchString(msg) {
					t.Errorf("%s %s %s: %s", v, tl.Name, what, res.text)
				}
				return code, msg
			}
			if _, msg := call("unknown", map[string]any{"bogus_arg": 1}); !strings.Contains(msg, `"bogus_arg"`) {
				t.Errorf("%s %s unknown: %s", v, tl.Name, msg)
			}
			if req := tl.InputSchema.Required; len(req) > 0 {
				if _, msg := call("missing", map[string]any{}); !slices.ContainsFunc(req, func(n string) bool { return strings.Contains(msg, n) }) {
					t.Errorf("%s %s missing: %s names none of %v", v, tl.Name, msg, req)
				}
			}
			for p, prop := range tl.InputSchema.Properties {
				wrong := wrongValue(prop.Type)
				args := map[string]any{p: wrong}
				if _, ok := tl.InputSchema.Properties["table"]; ok && p != "table" {
					args["table"] = "notes" // mini-app tools name their table first
				}
				if _, msg := call("wrong "+p, args); !strings.Contains(msg, p) {
					t.Errorf("%s %s wrong %s: %s", v, tl.Name, p, msg)
				}
			}
		}
	}
}

// wrongValue is a value of none of the JSON types a schema's type allows
// (a name or a list of names).
func wrongValue(schemaType any) any {
	types := fmt.Sprint(schemaType)
	for _, c := range []struct {
		types []string
		v     any
	}{{[]string{"string"}, "x"}, {[]string{"integer", "number"}, 123}, {[]string{"boolean"}, true}, {[]string{"array"}, []any{}}} {
		if !slices.ContainsFunc(c.types, func(t string) bool { return strings.Contains(types, t) }) {
			return c.v
		}
	}
	return map[string]any{}
}
