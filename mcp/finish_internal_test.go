package mcp

import (
	"context"
	"errors"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/miniapp"
)

// TestFinishMessage: a tool result mcp-go wrote without isError gets
// "isError":false after its content, where the direct road writes it; one
// with isError, and every other message, is left as it is; a handler error
// recorded as invalid params is answered -32602, others keep -32603.
func TestFinishMessage(t *testing.T) {
	rc := &rpcCodes{}
	ctx := withCaller(context.Background(), &caller{codes: rc})
	recordCode(ctx, mcpgo.NewRequestId(int64(7)), mcpgo.MethodToolsCall, nil, &invalidParams{msg: "invalid params: missing field `id`"})
	recordCode(ctx, mcpgo.NewRequestId(int64(8)), mcpgo.MethodToolsCall, nil, errors.New("internal error"))
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\":1}"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false}}`},
		{`{"jsonrpc":"2.0","id":"x","result":{"_meta":{"k":1},"content":[],"resultType":"complete","structuredContent":{"content":1}}}`,
			`{"jsonrpc":"2.0","id":"x","result":{"_meta":{"k":1},"content":[],"isError":false,"resultType":"complete","structuredContent":{"content":1}}}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"docs://x","text":"content"}]}}`, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"docs://x","text":"content"}]}}`},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"invalid params: missing field ` + "`id`" + `"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: missing field ` + "`id`" + `"}}`},
		{`{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"internal error"}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"internal error"}}`},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"again"}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"again"}}`}, // taken once
		{`not json "content"`, `not json "content"`},
	} {
		if got := string(finishLine([]byte(c.in+"\n"), rc)); got != c.want+"\n" {
			t.Errorf("finish %s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	// A mini-app failure answered as a JSON-RPC error gets its data.
	recordCode(ctx, mcpgo.NewRequestId("r"), mcpgo.MethodResourcesRead, nil, &miniapp.RPCError{E: &miniapp.Error{Code: "TABLE_NOT_FOUND", Text: "table not found: x", Data: map[string]any{"table": "x"}}})
	if got, want := string(finishLine([]byte(`{"jsonrpc":"2.0","id":"r","error":{"code":-32603,"message":"table not found: x"}}`), rc)),
		`{"jsonrpc":"2.0","id":"r","error":{"code":-32603,"message":"table not found: x","data":{"code":"TABLE_NOT_FOUND","message":"table not found: x","table":"x"}}}`; got != want {
		t.Errorf("data:\n got %s\nwant %s", got, want)
	}
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n"
	if got := string(finishBody([]byte(sse), "text/event-stream", nil)); got != "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[],\"isError\":false}}\n\n" {
		t.Errorf("event stream: %q", got)
	}
}
