package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStdioEndOfInput: calls sent just before stdin ends are finished and
// answered, their outcomes journaled, before ServeStdio returns.
func TestStdioEndOfInput(t *testing.T) {
	g := newGateway(t, time.Hour)
	for round := range 5 {
		var in bytes.Buffer
		for _, c := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"eof","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{}}}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"auto_insert_rows","arguments":{"type":"mi","schema":"app","table":"notes","rows":[{"title":"eof %d"}]}}}`, round),
			`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`,
		} {
			in.WriteString(c + "\n")
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := g.srv.ServeStdio(ctx, g.agent, &in, &out) // in ends at once
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		answers := map[float64]map[string]any{}
		sc := bufio.NewScanner(&out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				id, _ := m["id"].(float64)
				answers[id] = m
			}
		}
		text := func(id float64) string {
			res, _ := answers[id]["result"].(map[string]any)
			// A success says isError false on the gateway too.
			if isErr, ok := res["isError"].(bool); res == nil || !ok || isErr {
				t.Fatalf("round %d: answer %v: %v", round, id, answers[id])
			}
			return res["content"].([]any)[0].(map[string]any)["text"].(string)
		}
		if len(answers) != 4 || !strings.HasPrefix(text(3), `{"rows_affected":1,`) || answers[4]["result"] == nil {
			t.Fatalf("round %d: answers %v", round, answers)
		}
		var p struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(text(2)), &p); err != nil {
			t.Fatal(err)
		}
		v := g.journal(p.SessionID)
		outcomes := map[string]string{}
		for _, c := range v.Calls {
			outcomes[c.Tool] = c.Outcome
		}
		if v.Session.State != "ended" || len(v.Calls) != 2 || outcomes["ping"] != "ok" || outcomes["auto_insert_rows"] != "ok" {
			t.Fatalf("round %d: session %s, calls %+v", round, v.Session.State, v.Calls)
		}
	}
}
