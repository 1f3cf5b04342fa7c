package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// The direct road: a tools/call of the 2026-07-28 era that passes every
// transport rule is answered here, calling the tool's handler and writing
// the response in one pass, instead of through mcp-go's dispatcher. mcp-go's
// stateless path builds a session, goroutines and channels per request and
// encodes the result with encoding/json, which re-scans the tool's JSON
// text at every level of nesting; for a page of rows that was most of the
// cost of a call. Everything else — other methods, the handshake era, and
// any request that breaks a rule, so that the refusal is mcp-go's own — goes
// to mcp-go. The answers are the same bytes (TestDirectParity).

// direct answers body on the direct road and reports whether it did.
func (s *Server) direct(w http.ResponseWriter, r *http.Request, ctx context.Context, body []byte, handlers map[string]mcpserver.ToolHandlerFunc) bool {
	if s.noDirect.Load() {
		return false
	}
	version := r.Header.Get(mcpgo.HeaderProtocolVersion)
	if !mcpgo.IsModernProtocol(version) || !slices.Contains(SupportedVersions, version) || r.Header.Get(mcpgo.HeaderLastEventID) != "" {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != mcpgo.JSONRPC_VERSION || msg.Method != string(mcpgo.MethodToolsCall) {
		return false
	}
	id, ok := requestID(msg.ID)
	if !ok {
		return false
	}
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      *mcpgo.Meta     `json:"_meta"`
		Task      json.RawMessage `json:"task"`
	}
	if json.Unmarshal(msg.Params, &params) != nil || params.Meta.ProtocolVersion() != version || params.Task != nil {
		return false
	}
	h := handlers[params.Name]
	if h == nil || mcpgo.ValidateStandardHeaders(r.Header.Get, version, mcpgo.MethodToolsCall, msg.Params) != nil {
		return false
	}
	args := params.Arguments
	if bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = nil
	}
	req := mcpgo.CallToolRequest{}
	req.Method = string(mcpgo.MethodToolsCall)
	req.Params.Name, req.Params.Meta, req.Params.RawArguments = params.Name, params.Meta, args
	s.directCalls.Add(1)
	res, err := h(ctx, req)

	buf := bufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			bufs.Put(buf)
		}
	}()
	buf.Reset()
	if err == nil {
		err = s.encodeResult(buf, id, res)
	}
	if err != nil {
		buf.Reset()
		encodeRPCError(buf, id, err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return true
}

// requestID is the JSON text of a request id as mcp-go writes it back: a
// string, or a number that is an integer. Anything else (null, absent, a
// fraction) is left to mcp-go.
func requestID(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	var id mcpgo.RequestId
	if json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return nil, false
	}
	switch v := id.Value().(type) {
	case string:
		b, err := json.Marshal(v)
		return b, err == nil
	case int64:
		return strconv.AppendInt(nil, v, 10), true
	}
	return nil, false
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps one huge answer from pinning its buffer.
const maxPooledBuffer = 4 << 20

// encodeResult writes the JSON-RPC response carrying res the way mcp-go
// writes it for a 2026-07-28 client: keys in order, _meta naming this
// server, resultType "complete", strings escaped as encoding/json escapes
// them (HTML characters too) and a newline at the end. The tools of this
// package answer text blocks and raw structured content only.
func (s *Server) encodeResult(buf *bytes.Buffer, id []byte, res *mcpgo.CallToolResult) error {
	if res == nil {
		return errNilResult
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"minimal","version":`)
	writeString(buf, s.cfg.Version)
	buf.WriteString(`}},"content":[`)
	for i, c := range res.Content {
		tc, ok := c.(mcpgo.TextContent)
		if !ok || tc.Annotations != nil || tc.Meta != nil {
			return errUnexpectedContent
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"type":"text","text":`)
		writeString(buf, tc.Text)
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	if res.IsError {
		buf.WriteString(`,"isError":true`)
	}
	buf.WriteString(`,"resultType":"complete"`)
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		// The tools answer compact JSON of their own making (mcp-go would
		// compact it again; TestDirectParity holds the two equal).
		buf.WriteString(`,"structuredContent":`)
		if needsHTMLEscape(sc) {
			json.HTMLEscape(buf, sc) // encoding/json escapes these inside raw messages too
		} else {
			buf.Write(sc)
		}
	default:
		return errUnexpectedContent
	}
	buf.WriteString("}}\n")
	return nil
}

// encodeRPCError writes the JSON-RPC error mcp-go answers for a handler
// that returned an error: -32603 with the error's text.
func encodeRPCError(buf *bytes.Buffer, id []byte, msg string) {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"error":{"code":-32603,"message":`)
	writeString(buf, msg)
	buf.WriteString("}}\n")
}

// needsHTMLEscape reports whether b holds <, >, & or the first byte of
// U+2028 or U+2029, which encoding/json writes as \u escapes.
func needsHTMLEscape(b []byte) bool {
	for _, c := range []byte("<>&\xe2") {
		if bytes.IndexByte(b, c) >= 0 {
			return true
		}
	}
	return false
}

// writeString writes s as a JSON string, escaped byte for byte as
// encoding/json escapes it: quotes, backslashes and control characters,
// <, > and &, U+2028 and U+2029, and invalid UTF-8 as U+FFFD.
func writeString(buf *bytes.Buffer, s string) {
	// Appending to the buffer's free space and handing the bytes back
	// costs one copy in place; a page of rows escapes a quote every few
	// bytes, and append is far cheaper per piece than the Buffer methods.
	dst := appendString(slices.Grow(buf.AvailableBuffer(), len(s)+len(s)/4+2), s)
	buf.Write(dst)
}

// appendString appends s to dst as writeString writes it.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain marks the ASCII bytes written as they are inside a JSON string.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

type encodeError string

func (e encodeError) Error() string { return string(e) }

const (
	errNilResult         = encodeError("internal error: a tool answered nothing")
	errUnexpectedContent = encodeError("internal error: a tool answered content the HTTP face cannot encode")
)
