package mcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/littlebitlabs/minimal/observe"
)

// The direct road: a tools/call or tools/list that passes every transport
// rule is answered here in one pass — the tool's handler called and the
// response written — instead of through mcp-go's dispatcher. mcp-go's
// stateless path builds a session, goroutines and channels per request and
// encodes the result with encoding/json, which re-scans the tool's JSON
// text at every level of nesting; for a page of rows that was most of the
// cost of a call. It serves every protocol era: 2026-07-28 (the standard
// headers checked as mcp-go checks them), and the handshake era
// (2025-03-26 … 2025-11-25) when the request carries the Mcp-Session-Id
// that initialize issued to its identity (transport.go). Everything else —
// other methods, a handshake-era request without its transport session,
// and any request that breaks a rule, so that the refusal is mcp-go's own —
// goes to mcp-go. The answers are the same bytes (TestDirectParity).

// era is how a result is written for the protocol version of a request.
type era struct {
	// modern: 2026-07-28 and later, whose results carry _meta naming the
	// server and resultType.
	modern bool
	// structured: the client reads structuredContent (2025-06-18 and
	// later), which a result then carries beside its text; a 2025-03-26
	// client gets the text only (readsStructured).
	structured bool
}

// direct answers body on the direct road and reports whether it did.
func (s *Server) direct(w http.ResponseWriter, r *http.Request, ctx context.Context, body []byte, rd *roads) bool {
	if s.noDirect.Load() || r.Header.Get(mcpgo.HeaderLastEventID) != "" {
		return false
	}
	version := r.Header.Get(mcpgo.HeaderProtocolVersion)
	e := era{modern: mcpgo.IsModernProtocol(version), structured: readsStructured(ctx)}
	switch {
	case e.modern && !slices.Contains(SupportedVersions, version):
		return false
	case !e.modern && callerFrom(ctx).transport == "":
		// The handshake era without its transport session is mcp-go's.
		return false
	}
	if !jsonContent(r.Header.Get("Content-Type")) {
		return false
	}
	// One check of the whole message (json.Valid), then the members the
	// road reads picked out of it (envelope.go); a params that is not an
	// object fails it, as it fails mcp-go's.
	if !json.Valid(body) {
		return false
	}
	msg, ok := readEnvelope(body)
	if !ok || msg.jsonrpc != mcpgo.JSONRPC_VERSION {
		return false
	}
	// A handshake-era request names no version in _meta (one that does is
	// left to mcp-go); a 2026-07-28 one names the header's, with the
	// client's capabilities.
	meta := metaOf(msg.meta)
	metaVersion := ""
	if e.modern {
		metaVersion = version
		if !meta.caps {
			return false
		}
	}
	if !meta.ok || meta.version != metaVersion {
		return false
	}
	id, ok := requestID(msg.id)
	if !ok {
		return false
	}
	switch msg.method {
	case string(mcpgo.MethodToolsList):
		if msg.cursor != nil || (e.modern && r.Header.Get(mcpgo.HeaderMethod) != msg.method) {
			return false
		}
		s.directCalls.Add(1)
		s.listTools(w, ctx, id, rd, e)
		return true
	case string(mcpgo.MethodToolsCall):
	default:
		return false
	}
	if msg.task != nil || (e.modern && !standardHeaders(r.Header, msg.name)) {
		return false
	}
	inv, h := rd.invokers[msg.name], rd.handlers[msg.name]
	if h == nil {
		return false
	}
	args := json.RawMessage(msg.arguments)
	if def := rd.headed[msg.name]; e.modern && def != nil && !paramHeadersAgree(r.Header, def, args) {
		return false
	}
	if bytes.Equal(args, []byte("null")) {
		args = nil
	}
	var req mcpgo.CallToolRequest
	if inv == nil {
		req.Method = string(mcpgo.MethodToolsCall)
		req.Params.Name, req.Params.RawArguments = msg.name, args
		if msg.meta != nil {
			// mcp-go's handlers may read _meta (the gateway's own tools do
			// not): decoded as mcp-go decodes it.
			if json.Unmarshal(msg.meta, &req.Params.Meta) != nil {
				return false
			}
		}
	}
	s.directCalls.Add(1)

	buf := getBuffer()
	defer putBuffer(buf)
	var err error
	if inv != nil {
		var rep reply
		if rep, err = inv(ctx, validArguments(args)); err == nil {
			s.encodeReply(buf, id, rep, e)
			rep.free()
		}
	} else {
		var res *mcpgo.CallToolResult
		if res, err = h(ctx, req); err == nil {
			err = s.encodeResult(buf, id, res, e)
		}
	}
	if err != nil {
		buf.Reset()
		encodeRPCError(buf, id, err)
	}
	writeJSON(w, ctx, buf.Bytes())
	return true
}

// jsonContent reports whether a Content-Type names application/json (a
// charset or other parameter is fine), as serveRPC's check reads it; the
// plain value clients send is known without parsing.
func jsonContent(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// writeJSON answers 200 with one JSON message. A message bigger than
// the connection's buffer leaves with its headers in one write on a
// connection of observe.CorkListener (a page of rows is about 35 kB),
// instead of the buffer's first 4 kB and then the rest.
func writeJSON(w http.ResponseWriter, ctx context.Context, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if len(b) < corkAbove || len(b) > corkBelow {
		_, _ = w.Write(b) // a small one leaves with the headers when the request ends
		return
	}
	uncork := observe.Cork(ctx)
	defer func() { _ = uncork() }() // a failed write fails the connection's next one too
	_, _ = w.Write(b)
	_ = http.NewResponseController(w).Flush()
}

// writeJSON corks the connection for a message of corkAbove to corkBelow
// bytes: a smaller one fits net/http's 4 kB buffer with its headers, and
// a bigger one is not copied again for one write less.
const (
	corkAbove = 3 << 10
	corkBelow = 256 << 10
)

// listTools answers a tools/list: the tools of the transport sorted by
// name, as the caller sees them (Server.listed), written as mcp-go writes
// them (for 2026-07-28 with resultType, the server's name and the caching
// hints mcp-go adds: ttlMs 0, cacheScope private).
func (s *Server) listTools(w http.ResponseWriter, ctx context.Context, id []byte, rd *roads, e era) {
	res := mcpgo.ListToolsResult{Tools: rd.list(ctx, rd.defs)}
	if e.modern {
		res.SetResultType(mcpgo.ResultTypeComplete)
		res.EnsureResultMeta().SetServerInfo(mcpgo.Implementation{Name: serverName, Version: s.cfg.Version})
		res.SetCacheHints(0, mcpgo.CacheScopePrivate)
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if b, err := json.Marshal(res); err != nil {
		encodeRPCError(buf, id, err)
	} else {
		buf.WriteString(`{"jsonrpc":"2.0","id":`)
		buf.Write(id)
		buf.WriteString(`,"result":`)
		buf.Write(b)
		buf.WriteString("}\n")
	}
	writeJSON(w, ctx, buf.Bytes())
}

// standardHeaders applies mcp-go's rule for the Mcp-Method and Mcp-Name
// headers of a tools/call (mcpgo.ValidateStandardHeaders) to the name the
// body gives, already decoded: Mcp-Method is tools/call, Mcp-Name is set and
// decodes to the name.
func standardHeaders(h http.Header, name string) bool {
	if h.Get(mcpgo.HeaderMethod) != string(mcpgo.MethodToolsCall) {
		return false
	}
	v := h.Get(mcpgo.HeaderName)
	decoded, ok := mcpgo.DecodeHeaderValue(v)
	return v != "" && ok && decoded == name
}

// paramHeadersAgree applies mcp-go's rule for the Mcp-Param-* headers of a
// tools/call (mcpgo.ValidateParamHeadersLookup) to a tool whose session_id
// argument is mirrored in Mcp-Param-Session-Id: a call that sends neither
// passes without the check.
func paramHeadersAgree(h http.Header, def *mcpgo.Tool, args json.RawMessage) bool {
	if _, sent := h[ParamSessionHeader]; !sent && !bytes.Contains(args, []byte(`"session_id"`)) {
		return true
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("null")
	}
	params := append(append([]byte(`{"arguments":`), args...), '}')
	return mcpgo.ValidateParamHeadersLookup(func(name string) (string, bool) {
		v := h.Values(name)
		if len(v) == 0 {
			return "", false
		}
		return v[0], true
	}, def, params) == nil
}

// requestID is the JSON text of a request id as it is written back: a
// string, or an integer literal exactly as sent (also past 2^53, as
// serveRPC echoes one on mcp-go's road). Anything else (null, absent, a
// fraction, an exponent) is left to mcp-go's road.
func requestID(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		b, err := json.Marshal(s)
		return b, err == nil
	}
	for i, c := range raw {
		if (c < '0' || c > '9') && (c != '-' || i > 0) {
			return nil, false
		}
	}
	return raw, true
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// getBuffer takes an empty buffer from the pool.
func getBuffer() *bytes.Buffer {
	b := bufs.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// putBuffer hands b (nil is fine) back to the pool, unless it has grown
// too big to keep.
func putBuffer(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooledBuffer {
		bufs.Put(b)
	}
}

// maxPooledBuffer keeps one huge answer from pinning its buffer.
const maxPooledBuffer = 4 << 20

// encodeResult writes the JSON-RPC response carrying res the way mcp-go
// writes it for a client of era e: keys in order (for 2026-07-28 _meta
// naming this server and resultType "complete"), strings escaped as
// encoding/json escapes them (HTML characters too) and a newline at the
// end. The tools of this package answer text blocks and raw structured
// content only.
func (s *Server) encodeResult(buf *bytes.Buffer, id []byte, res *mcpgo.CallToolResult, e era) error {
	if res == nil {
		return errNilResult
	}
	s.openResult(buf, id, e)
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
	switch sc := res.StructuredContent.(type) {
	case nil:
		closeResult(buf, res.IsError, nil, "", false, e)
	case json.RawMessage:
		// The tools answer compact JSON of their own making (mcp-go would
		// compact it again; TestDirectParity holds the two equal).
		closeResult(buf, res.IsError, sc, "", needsHTMLEscape(sc), e)
	default:
		return errUnexpectedContent
	}
	return nil
}

// encodeReply writes the response carrying a gateway tool's reply, the
// bytes encodeResult writes for the reply's result (reply.result).
// The text is read once: escaping it tells whether it holds a character
// the structured copy must have escaped too.
func (s *Server) encodeReply(buf *bytes.Buffer, id []byte, r reply, e era) {
	s.openResult(buf, id, e)
	buf.WriteString(`{"type":"text","text":`)
	html := writeString(buf, r.text)
	buf.WriteByte('}')
	if r.isError || !e.structured {
		closeResult(buf, r.isError, nil, "", false, e) // a refusal has no structured content (reply.result)
		return
	}
	closeResult(buf, false, r.text, r.key, html, e)
}

// openResult writes a response up to the first content block.
func (s *Server) openResult(buf *bytes.Buffer, id []byte, e era) {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	if !e.modern {
		buf.WriteString(`,"result":{"content":[`)
		return
	}
	buf.WriteString(`,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"` + serverName + `","version":`)
	writeString(buf, s.cfg.Version)
	buf.WriteString(`}},"content":[`)
}

// closeResult writes the rest of a response after the content blocks: the
// structured content, when not nil, is raw JSON (wrapped in an object under
// key when key is set) and, when html reports that it may hold <, >, &,
// U+2028 or U+2029 (needsHTMLEscape), escaped as encoding/json escapes raw
// messages.
func closeResult(buf *bytes.Buffer, isError bool, structured []byte, key string, html bool, e era) {
	buf.WriteByte(']')
	// isError is always written, false too: mini-app-mcp's clients (and
	// agents) check it (finish.go adds it on mcp-go's road).
	if isError {
		buf.WriteString(`,"isError":true`)
	} else {
		buf.WriteString(`,"isError":false`)
	}
	if e.modern {
		buf.WriteString(`,"resultType":"complete"`)
	}
	if structured != nil {
		buf.WriteString(`,"structuredContent":`)
		if key != "" {
			buf.WriteString(`{"` + key + `":`)
		}
		if html {
			json.HTMLEscape(buf, structured) // encoding/json escapes these inside raw messages too
		} else {
			buf.Write(structured)
		}
		if key != "" {
			buf.WriteByte('}')
		}
	}
	buf.WriteString("}}\n")
}

// encodeRPCError writes the JSON-RPC error answered for a handler that
// returned err: its code (rpcCode), its text and its data (rpcData).
func encodeRPCError(buf *bytes.Buffer, id []byte, err error) {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"error":{"code":`)
	buf.WriteString(strconv.Itoa(rpcCode(err)))
	buf.WriteString(`,"message":`)
	writeString(buf, err.Error())
	if data := rpcData(err); data != nil {
		buf.WriteString(`,"data":`)
		buf.Write(data)
	}
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
// <, > and &, U+2028 and U+2029, and invalid UTF-8 as U+FFFD. It reports
// whether s holds <, >, &, U+2028 or U+2029 (appendEscaped).
func writeString[T string | []byte](buf *bytes.Buffer, s T) (html bool) {
	// Made after the buffer's bytes, in its free space, and handed back as
	// its new contents: no copy.
	buf.Grow(len(s) + len(s)/4 + 16)
	b, html := appendEscaped(buf.Bytes(), s)
	*buf = *bytes.NewBuffer(b)
	return html
}

// appendString appends s to dst as writeString writes it. A page of rows
// has a quote every few bytes, too often for a branch to guess, so the
// bytes go two at a time through a table (escapeRun) while they are plain
// ASCII, quotes and backslashes; the rest (control characters, <, >, &,
// and every byte of 0x80 and up, checked as UTF-8) one by one.
func appendString[T string | []byte](dst []byte, s T) []byte {
	d, _ := appendEscaped(dst, s)
	return d
}

// appendEscaped is appendString, and reports whether s holds <, > or &,
// U+2028 or U+2029: the characters encoding/json escapes only for HTML.
func appendEscaped[T string | []byte](dst []byte, s T) (_ []byte, html bool) {
	const hex = "0123456789abcdef"
	// slack is the room a step needs after j: eight bytes of escapeRun
	// at most double, an escape is 6, and the closing quote.
	const slack = 24
	d, j := grow(dst, len(s)+slack)
	d[j] = '"'
	j++
	pairs := escapedPairs()
	for i := 0; ; {
		i, j = escapeRun(pairs, d, s, i, j)
		if len(d)-j < slack {
			d, j = grow(d[:j], len(s)-i+slack)
			continue
		}
		if i == len(s) {
			break
		}
		// The next eight bytes (or to the end) one by one.
		for end := min(i+8, len(s)); i < end; {
			if len(d)-j < slack {
				d, j = grow(d[:j], len(s)-i+slack)
			}
			c := s[i]
			if c < utf8.RuneSelf {
				i++
				if plain[c] {
					d[j] = c
					j++
					continue
				}
				d[j] = '\\'
				switch c {
				case '"', '\\':
					d[j+1] = c
				case '\b':
					d[j+1] = 'b'
				case '\f':
					d[j+1] = 'f'
				case '\n':
					d[j+1] = 'n'
				case '\r':
					d[j+1] = 'r'
				case '\t':
					d[j+1] = 't'
				default:
					d[j+1], d[j+2], d[j+3], d[j+4], d[j+5] = 'u', '0', '0', hex[c>>4], hex[c&0xf]
					j += 4
					html = html || c >= ' ' // <, > or &; the rest are control characters
				}
				j += 2
				continue
			}
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			switch {
			case r == utf8.RuneError && size == 1:
				j += copy(d[j:], `\ufffd`)
			case r == '\u2028' || r == '\u2029':
				d[j], d[j+1], d[j+2], d[j+3], d[j+4], d[j+5] = '\\', 'u', '2', '0', '2', hex[r&0xf]
				j += 6
				html = true
			default:
				j += copy(d[j:], s[i:i+size])
			}
			i += size
		}
	}
	d[j] = '"'
	return d[:j+1], html
}

// escapeRun escapes s from i into d from j, eight bytes at a time, while
// the bytes are plain ASCII, quotes and backslashes and d has room for
// them, and returns where it stopped. Each pair of bytes is looked up in
// pairs: no branch per byte, and the position of the next output does not
// wait on a comparison.
//
//go:noinline
func escapeRun[T string | []byte](pairs *[1 << 16]uint32, d []byte, s T, i, j int) (int, int) {
	for i+8 <= len(s) && j+16 <= len(d) {
		w := s[i : i+8]
		e0 := pairs[uint16(w[0])|uint16(w[1])<<8]
		e1 := pairs[uint16(w[2])|uint16(w[3])<<8]
		e2 := pairs[uint16(w[4])|uint16(w[5])<<8]
		e3 := pairs[uint16(w[6])|uint16(w[7])<<8]
		if e0 == 0 || e1 == 0 || e2 == 0 || e3 == 0 {
			break
		}
		o := (*[16]byte)(d[j : j+16])
		put4(o, 0, e0)
		k := width(e0)
		put4(o, k, e1)
		k += width(e1)
		put4(o, k, e2)
		k += width(e2)
		put4(o, k, e3)
		k += width(e3)
		i, j = i+8, j+k
	}
	return i, j
}

// put4 stores the four bytes of e at o[k:], k in 0..12: one store.
func put4(o *[16]byte, k int, e uint32) {
	binary.LittleEndian.PutUint32(o[k&15:], e)
}

// width is the number of bytes of an entry of escapedPairs, none of which
// is 0.
func width(e uint32) int { return (bits.Len32(e) + 7) >> 3 }

// escapedPairs is the table of escapeRun: for two bytes (the first in the
// low byte of the index), the bytes they are written as inside a JSON
// string, the first in the low byte (2 to 4 of them, none 0), or 0 when
// one of them is neither plain ASCII, a quote nor a backslash.
var escapedPairs = sync.OnceValue(func() *[1 << 16]uint32 {
	var t [1 << 16]uint32
	one := func(c byte) (uint32, int) {
		switch {
		case c == '"' || c == '\\':
			return '\\' | uint32(c)<<8, 2
		case plain[c]:
			return uint32(c), 1
		}
		return 0, 0
	}
	for p := range t {
		a, la := one(byte(p))
		b, lb := one(byte(p >> 8))
		if la > 0 && lb > 0 {
			t[p] = a | b<<(8*la)
		}
	}
	return &t
})

// grow returns b's bytes with at least n free after them (and a quarter
// more for the escapes to come), extended to its capacity, and len(b).
func grow(b []byte, n int) ([]byte, int) {
	j := len(b)
	if cap(b)-j < n {
		b = slices.Grow(b, n+n/4)
	}
	return b[:cap(b)], j
}

// plain marks the ASCII bytes written as they are inside a JSON string
// (none of 0x80 and up: those are checked as UTF-8).
var plain = func() (t [256]bool) {
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
