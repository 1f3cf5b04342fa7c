package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/miniapp"
)

// Two wire rules mcp-go's dispatcher cannot follow, applied to what it
// writes (the direct road writes them itself, fast.go):
//
//   - A tool result always carries isError, false too: mini-app-mcp's
//     clients assert isError == false on every success, and agents check
//     it. mcp-go's CallToolResult leaves a false isError out and a handler
//     cannot return another result type, so the member is added to the
//     encoded result, after content where mcp-go's key order puts it.
//   - A tool handler's error is -32603 without data in mcp-go; a handler
//     that refuses its arguments in drop-in mode returns an invalidParams,
//     answered -32602 as mini-app-mcp answers it, and a mini-app failure
//     answered as a JSON-RPC error (reload, resources: miniapp.RPCError)
//     carries mini-app-mcp's data {code, message, …}. The OnError hook
//     records the request ids of such errors (rpcCodes, per connection or
//     request) and the encoded error is put right.

// invalidParams is a tool's refusal of its arguments answered as the
// JSON-RPC error -32602 (drop-in mode).
type invalidParams struct{ msg string }

func (e *invalidParams) Error() string { return e.msg }

// rpcCode is the JSON-RPC error code a handler's error is answered with.
func rpcCode(err error) int {
	var ip *invalidParams
	if errors.As(err, &ip) {
		return mcpgo.INVALID_PARAMS
	}
	return mcpgo.INTERNAL_ERROR
}

// rpcData is the data of the JSON-RPC error a handler's error is answered
// with: a mini-app failure's {code, message, …extra}, else nil.
func rpcData(err error) json.RawMessage {
	var re *miniapp.RPCError
	if !errors.As(err, &re) {
		return nil
	}
	data := map[string]any{}
	for k, v := range re.E.Data {
		data[k] = v
	}
	data["code"], data["message"] = re.E.Code, re.E.Text
	b, _ := json.Marshal(data)
	return b
}

// rpcFix is how the encoded error of one request is put right.
type rpcFix struct {
	code int
	data json.RawMessage
}

// rpcCodes are the fixes of the handler errors of one connection (stdio)
// or request (HTTP), by the JSON text of the request id.
type rpcCodes struct {
	mu    sync.Mutex
	codes map[string]rpcFix
}

// recordCode is the OnError hook: an error of a handler with a code or
// data of its own is noted for the encoded answer.
func recordCode(ctx context.Context, id any, _ mcpgo.MCPMethod, _ any, err error) {
	fix := rpcFix{code: rpcCode(err), data: rpcData(err)}
	rc := callerFrom(ctx).codes
	if (fix.code == mcpgo.INTERNAL_ERROR && fix.data == nil) || rc == nil {
		return
	}
	key, jerr := json.Marshal(id)
	if jerr != nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.codes == nil {
		rc.codes = map[string]rpcFix{}
	}
	rc.codes[string(key)] = fix
}

// take returns and forgets the fix recorded for a request id.
func (rc *rpcCodes) take(id []byte) (rpcFix, bool) {
	if rc == nil {
		return rpcFix{}, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fix, ok := rc.codes[string(id)]
	delete(rc.codes, string(id))
	return fix, ok
}

// finishBody applies the rules above to a body mcp-go wrote with content
// type ctype: one JSON message, or an event stream of them.
func finishBody(body []byte, ctype string, rc *rpcCodes) []byte {
	switch {
	case bytes.HasPrefix([]byte(ctype), []byte("application/json")):
		return finishLine(body, rc)
	case bytes.HasPrefix([]byte(ctype), []byte("text/event-stream")):
		lines := bytes.SplitAfter(body, []byte("\n"))
		for i, l := range lines {
			if data, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
				lines[i] = append([]byte("data: "), finishLine(data, rc)...)
			}
		}
		return bytes.Join(lines, nil)
	}
	return body
}

// finishLine applies the rules to one message, keeping the white space
// around it.
func finishLine(line []byte, rc *rpcCodes) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return line
	}
	start := bytes.Index(line, trimmed)
	out := finishMessage(trimmed, rc)
	if len(out) == len(trimmed) && bytes.Equal(out, trimmed) {
		return line
	}
	return slices.Concat(line[:start], out, line[start+len(trimmed):])
}

// finishMessage applies the rules to one JSON-RPC message.
func finishMessage(msg []byte, rc *rpcCodes) []byte {
	if rc != nil && bytes.Contains(msg, []byte(`"error"`)) {
		var e struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data,omitempty"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &e) == nil && e.Error != nil {
			if fix, ok := rc.take(e.ID); ok && e.Error.Code == mcpgo.INTERNAL_ERROR {
				e.Error.Code = fix.code
				if fix.data != nil {
					e.Error.Data = fix.data
				}
				if b, err := json.Marshal(e); err == nil {
					return b
				}
			}
			return msg
		}
	}
	if bytes.Contains(msg, []byte(`"content"`)) {
		return markSuccess(msg)
	}
	return msg
}

// markSuccess adds "isError":false after the content of a response whose
// result has content (only a tool result has) and no isError.
func markSuccess(msg []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(msg))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return msg
	}
	var skip json.RawMessage
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return msg
		}
		if k != "result" {
			if d.Decode(&skip) != nil {
				return msg
			}
			continue
		}
		if t, err := d.Token(); err != nil || t != json.Delim('{') {
			return msg
		}
		at := -1
		for d.More() {
			k, err := d.Token()
			if err != nil || d.Decode(&skip) != nil {
				return msg
			}
			switch k {
			case "content":
				at = int(d.InputOffset())
			case "isError":
				return msg
			}
		}
		if at < 0 {
			return msg
		}
		return slices.Concat(msg[:at], []byte(`,"isError":false`), msg[at:])
	}
	return msg
}
