package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/mcp"
)

// TestDirectParity: every request the direct road of the HTTP face answers
// gets the same status, Content-Type and bytes as mcp-go gives it, in every
// protocol era, and a request the direct road leaves alone (other methods,
// broken rules, a handshake-era request without its transport session) is
// still answered by mcp-go.
func TestDirectParity(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	read := map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 5, "page_number": 0, "query": map[string]any{"oy": "title.as"}}
	type request struct {
		name    string
		headers map[string]string
		body    string
		direct  bool // the direct road answers it
		era     string
	}
	var cases []request
	for _, v := range eras {
		// A handshake-era client initializes first and carries the
		// Mcp-Session-Id it was issued.
		transport := ""
		if v != modern {
			h := map[string]string{"LB-Access-Token": g.agent}
			ini := g.post(h, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if transport = ini.header.Get("Mcp-Session-Id"); transport == "" {
				t.Fatalf("%s: initialize issued no Mcp-Session-Id: %d %s", v, ini.status, ini.raw)
			}
		}
		headers := func(method, name, session string) map[string]string {
			h := map[string]string{"LB-Access-Token": g.agent}
			if v != "2025-03-26" {
				h["MCP-Protocol-Version"] = v
			}
			if v == modern {
				h["Mcp-Method"] = method
				if name != "" {
					h["Mcp-Name"] = name
				}
			} else {
				h["Mcp-Session-Id"] = transport
			}
			if session != "" {
				h[mcp.SessionHeader] = session
			}
			return h
		}
		tool := func(name, id string, args any, session string) request {
			params := map[string]any{"name": name}
			if v == modern {
				params["_meta"] = meta()
			}
			if args != nil {
				params["arguments"] = args
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/call", "params": params})
			return request{name: v + " " + name + " " + id, headers: headers("tools/call", name, session), body: string(b), direct: true, era: v}
		}
		list := func(id string) request {
			params := map[string]any{}
			if v == modern {
				params["_meta"] = meta()
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/list", "params": params})
			return request{name: v + " tools/list " + id, headers: headers("tools/list", "", ""), body: string(b), direct: true}
		}
		era := []request{
			tool("auto_read_rows", "1", read, sid),                // rows with "&" in a value: HTML escaping
			tool("auto_read_rows", `"req-7"`, read, sid),          // a string id
			tool("auto_read_rows", "9007199254740993", read, sid), // an id past float64's integers
			tool("auto_read_rows", "2", map[string]any{"type": "mi", "schema": "app", "table": "nope", "page_size": 1, "page_number": 0}, sid),
			tool("auto_read_rows", "3", map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 1, "page_number": 0, "bogus": 1}, sid),
			tool("auto_read_rows", "4", read, ""),                   // no session: a refusal
			tool("meta_list_tables", "5", nil, sid),                 // no arguments
			tool("meta_list_databases", "6", map[string]any{}, sid), // an empty object
			tool("help", "7", nil, ""),                              // no session needed
			tool("list", "8", map[string]any{"table": "notes", "order_by": []any{map[string]any{"field": "title"}}}, sid), // mini-app text
			tool("info", "9", map[string]any{}, sid),                                // mini-app refusal text
			tool("list", "10", map[string]any{"table": "notes", "limit": "x"}, sid), // a mini-app argument refusal
			list("16"),
			list(`"list-17"`),
			tool("no_such_tool", "11", map[string]any{}, sid),
			tool("auto_read_rows", "null", read, sid), // not a request id
			tool("auto_read_rows", "1.5", read, sid),
		}
		for i := len(era) - 3; i < len(era); i++ {
			era[i].direct = false // unknown tool, id null, id 1.5
		}
		// A message the direct road could read otherwise than encoding/json
		// (a key twice, a key in another case) or that has a member it
		// does not read is left to mcp-go (envelope.go).
		for _, edit := range []func(string) string{
			func(b string) string { return strings.Replace(b, `"id":20,`, `"id":21,"id":20,`, 1) },
			func(b string) string { return strings.Replace(b, `"id":20,`, `"ID":20,`, 1) },
			func(b string) string { return strings.Replace(b, `"id":20,`, `"id":20,"extra":{},`, 1) },
			func(b string) string {
				return strings.Replace(b, `"name":"meta_list_databases"`, `"name":"meta_list_databases","name":"help"`, 1)
			},
		} {
			odd := tool("meta_list_databases", "20", map[string]any{}, sid)
			before := odd.body
			if odd.body = edit(odd.body); odd.body == before {
				t.Fatalf("edit did not apply: %s", odd.body)
			}
			odd.name += " " + odd.body
			odd.direct = false
			era = append(era, odd)
		}
		wrongType := tool("meta_list_databases", "15", map[string]any{}, sid)
		wrongType.headers["Content-Type"] = "text/plain"
		wrongType.direct = false
		era = append(era, wrongType)
		if v == modern {
			mismatch := tool("meta_list_databases", "12", map[string]any{}, sid)
			mismatch.headers["Mcp-Name"] = "help"
			noName := tool("meta_list_databases", "13", map[string]any{}, sid)
			delete(noName.headers, "Mcp-Name")
			listMismatch := list("18")
			listMismatch.headers["Mcp-Method"] = "tools/call"
			for _, c := range []*request{&mismatch, &noName, &listMismatch} {
				c.direct = false
			}
			era = append(era, mismatch, noName, listMismatch)
		} else {
			// Without the Mcp-Session-Id of initialize: mcp-go's road.
			bare := tool("meta_list_databases", "14", map[string]any{}, sid)
			delete(bare.headers, "Mcp-Session-Id")
			bare.direct = false
			// The standard headers of 2026-07-28 mean nothing here.
			ignored := tool("meta_list_databases", "19", map[string]any{}, sid)
			ignored.headers["Mcp-Name"] = "help"
			era = append(era, bare, ignored)
		}
		cases = append(cases, era...)
	}

	type answer struct {
		status int
		ctype  string
		body   []byte
	}
	do := func(r request) answer {
		rep := g.post(r.headers, r.body)
		return answer{rep.status, rep.header.Get("Content-Type"), rep.raw}
	}
	for _, c := range cases {
		g.srv.SetDirect(true)
		before := g.srv.DirectCalls()
		direct := do(c)
		if took := g.srv.DirectCalls() > before; took != c.direct {
			t.Errorf("%s: answered by the direct road: %v, want %v", c.name, took, c.direct)
		}
		g.srv.SetDirect(false)
		viaSDK := do(c)
		if direct.status != viaSDK.status || direct.ctype != viaSDK.ctype || !bytes.Equal(direct.body, viaSDK.body) {
			t.Errorf("%s:\ndirect %d %s %s\nmcp-go %d %s %s", c.name, direct.status, direct.ctype, direct.body, viaSDK.status, viaSDK.ctype, viaSDK.body)
		}
		// Every tool result says isError, false too, on both roads; a
		// success carries structuredContent for a client that reads it
		// (2025-06-18 and later), the text alone for a 2025-03-26 one.
		result := bytes.Contains(direct.body, []byte(`"result":{"_meta"`)) || bytes.Contains(direct.body, []byte(`"result":{"content"`))
		if result && bytes.Contains(direct.body, []byte(`"content":[`)) &&
			!bytes.Contains(direct.body, []byte(`"isError":false`)) && !bytes.Contains(direct.body, []byte(`"isError":true`)) {
			t.Errorf("%s: a tool result without isError: %s", c.name, direct.body)
		}
		if c.era != "" && result && bytes.Contains(direct.body, []byte(`"isError":false`)) &&
			bytes.Contains(direct.body, []byte(`"structuredContent"`)) != (c.era != "2025-03-26") {
			t.Errorf("%s: structuredContent sent %v: %s", c.name, !(c.era != "2025-03-26"), direct.body)
		}
	}
	g.srv.SetDirect(true)
	// Both roads journal alike: each call once, its arguments first.
	v := g.journal(sid)
	seen := map[string]int{}
	for _, c := range v.Calls {
		seen[c.Tool]++
	}
	if seen["auto_read_rows"] < 8*len(eras) || seen["list"] != 4*len(eras) {
		t.Errorf("journal: %v", seen)
	}
}

// TestDirectJournalArguments: the direct road journals a call's arguments
// as mcp-go's road does, compacted, whether they came compact (journaled
// as sent, without another pass), pretty-printed, with spaces inside
// strings or absent; and both roads answer them alike, null too.
func TestDirectJournalArguments(t *testing.T) {
	g := newGateway(t, time.Hour)
	sid := g.start(g.agent)
	headers := map[string]string{"LB-Access-Token": g.agent, "MCP-Protocol-Version": modern,
		"Mcp-Method": "tools/call", "Mcp-Name": "auto_read_rows", mcp.SessionHeader: sid}
	metaJSON, _ := json.Marshal(meta())
	for _, args := range []string{
		`{"type":"mi","schema":"app","table":"notes","page_size":2,"page_number":0,"query":{"oy":"title.as"}}`,
		"{\n  \"type\": \"mi\",\n\t\"schema\" : \"app\",\r\n  \"table\":\"notes\", \"page_size\": 2, \"page_number\": 0\n}",
		`{"type":"mi","schema":"app","table":"notes","page_size":2,"page_number":0,"query":{"title":"eq.Read me over REST"}}`,
		`{"type":"mi","schema":"app","table":"notes","page_size":2,"page_number":0,"query":{"title":"eq.a\tb"}}`,
		`null`,
		``,
	} {
		params := `"name":"auto_read_rows","_meta":` + string(metaJSON)
		if args != "" {
			params += `,"arguments":` + args
		}
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + params + `}}`
		var answers [2][]byte
		for i, direct := range []bool{true, false} {
			g.srv.SetDirect(direct)
			before := g.srv.DirectCalls()
			r := g.post(headers, body)
			if took := g.srv.DirectCalls() > before; took != direct || r.status != 200 {
				t.Fatalf("%s: status %d, direct road %v, want %v", args, r.status, took, direct)
			}
			answers[i] = r.raw
		}
		g.srv.SetDirect(true)
		if !bytes.Equal(answers[0], answers[1]) {
			t.Errorf("%s: direct %s\nmcp-go %s", args, answers[0], answers[1])
		}
		if err := g.st.FlushJournal(context.Background()); err != nil {
			t.Fatal(err)
		}
		entries, err := g.st.Journal(context.Background(), sid)
		if err != nil || len(entries) < 2 {
			t.Fatalf("journal: %v, %d entries", err, len(entries))
		}
		if args == "null" {
			continue // journaled "{}" on the direct road, as before it read arguments itself
		}
		want := "{}"
		if c := new(bytes.Buffer); json.Compact(c, []byte(args)) == nil {
			want = c.String()
		}
		for _, e := range entries[len(entries)-2:] {
			if e.Arguments != want {
				t.Errorf("%s: journaled %s, want %s", args, e.Arguments, want)
			}
		}
	}
}
