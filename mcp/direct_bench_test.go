package mcp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/mcp"
)

// BenchmarkDirectReadRows serves auto_read_rows of a 100-row page of the
// mini-app table notes through the HTTP face in process (no socket), as
// the bench's MCP measure sends it, in a handshake era and in 2026-07-28:
// the direct road with the session check, the journal entry, the read and
// the answer. The journal writer runs beside it.
func BenchmarkDirectReadRows(b *testing.B) {
	g := newGateway(b, time.Hour)
	sid := g.start(g.agent)
	rows := make([]map[string]any, 100)
	for i := range rows {
		rows[i] = map[string]any{"id": nil, "title": fmt.Sprintf("note %03d", i),
			"body": fmt.Sprintf("line %d of the bench: \"quoted\" and a\\backslash & more", i)}
	}
	g.tool(g.agent, sid, "auto_insert_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes", "rows": rows}).ok(b)
	h := g.srv.Handler()
	args := map[string]any{"type": "mi", "schema": "app", "table": "notes", "page_size": 100, "page_number": 0,
		"query": map[string]any{"oy": "title.as"}}
	for _, era := range []string{"2025-06-18", modern} {
		b.Run(era, func(b *testing.B) {
			params := map[string]any{"name": "auto_read_rows", "arguments": args}
			headers := http.Header{"Lb-Access-Token": {g.agent}, "Content-Type": {"application/json"},
				"Mcp-Protocol-Version": {era}, mcp.SessionHeader: {sid}}
			if era == modern {
				params["_meta"] = meta()
				headers["Mcp-Method"] = []string{"tools/call"}
				headers["Mcp-Name"] = []string{"auto_read_rows"}
			} else {
				headers["Mcp-Session-Id"] = []string{g.initialize(g.agent)}
			}
			body := rpcBody("tools/call", params)
			serve := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8484"+mcp.Path, strings.NewReader(body))
				req.Header = headers.Clone()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				return w
			}
			direct := g.srv.DirectCalls()
			if w := serve(); w.Code != 200 || !strings.Contains(w.Body.String(), `"isError":false`) ||
				strings.Count(w.Body.String(), `\"title\":`) != 100 {
				b.Fatalf("%d %.300s", w.Code, w.Body.String())
			}
			if g.srv.DirectCalls() != direct+1 {
				b.Fatal("the call did not take the direct road")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				serve()
			}
		})
	}
}
