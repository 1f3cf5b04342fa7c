package mcp

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The direct road reads a request without reflection: json.Valid checks
// the whole body once (the scan encoding/json makes before it decodes),
// then readEnvelope picks the members the road needs out of the valid text
// and decodeValue turns a tool's arguments into the values encoding/json
// gives (numbers as json.Number). A message readEnvelope is not sure to
// read as encoding/json reads it — a member it does not know, a key in
// another case or escaped, a key twice, a string with escapes where one is
// expected — is declined, and goes to mcp-go's road.

// envelope holds the members of a JSON-RPC request the direct road reads:
// raw JSON values, nil when absent.
type envelope struct {
	jsonrpc, method, name string
	id, arguments, meta   []byte
	task, cursor          []byte
}

// readEnvelope reads a request body that json.Valid accepted: an object
// with members jsonrpc, id, method and params, params an object with
// members name, arguments, _meta, task and cursor, each at most once.
// Members jsonrpc, method and name are strings without escapes; it reports
// false for anything else.
func readEnvelope(body []byte) (envelope, bool) {
	var e envelope
	var seen [4]bool
	ok := eachMember(body, func(key string, v []byte) bool {
		k := -1
		switch key {
		case "jsonrpc":
			k, e.jsonrpc = 0, plainString(v)
			return setOnce(&seen, k) && e.jsonrpc != ""
		case "id":
			k, e.id = 1, v
		case "method":
			k, e.method = 2, plainString(v)
			return setOnce(&seen, k) && e.method != ""
		case "params":
			k = 3
			return setOnce(&seen, k) && readParams(v, &e)
		}
		return k >= 0 && setOnce(&seen, k)
	})
	return e, ok
}

// readParams reads the params object of a request into e.
func readParams(v []byte, e *envelope) bool {
	var seen [5]bool
	return eachMember(v, func(key string, v []byte) bool {
		k := -1
		switch key {
		case "name":
			k, e.name = 0, plainString(v)
			return setOnce(&seen, k) && e.name != ""
		case "arguments":
			k, e.arguments = 1, v
		case "_meta":
			k, e.meta = 2, v
		case "task":
			k, e.task = 3, v
		case "cursor":
			k, e.cursor = 4, v
		}
		return k >= 0 && setOnce(&seen, k)
	})
}

func setOnce[A ~[4]bool | ~[5]bool](seen *A, k int) bool {
	if (*seen)[k] {
		return false
	}
	(*seen)[k] = true
	return true
}

// eachMember calls f with each member of the JSON object b (valid JSON),
// its key unescaped only when it needs no unescaping, and reports whether
// b is an object and f accepted every member (a key with escapes is not).
func eachMember(b []byte, f func(key string, v []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return true
	}
	for {
		end := skipValue(b, i)
		key := plainString(b[i:end])
		if key == "" {
			return false
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		end = skipValue(b, i)
		if !f(key, b[i:end]) {
			return false
		}
		i = skipSpace(b, end)
		if b[i] == '}' {
			return true
		}
		i = skipSpace(b, i+1) // the comma
	}
}

// plainString is the JSON string v (valid JSON) when it holds no escape
// and only ASCII, so it reads as it is written; "" otherwise.
func plainString(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			return ""
		}
	}
	return string(s)
}

// skipSpace returns the index of the first byte of b from i on that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at i
// in b (valid JSON).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	// A number or a literal: up to the next delimiter.
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the JSON string that starts at i
// in b (valid JSON).
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// decodeValue decodes the JSON value v (valid JSON, as json.Valid or
// json.Compact checked it) as encoding/json decodes it into an any with
// UseNumber: objects as map[string]any (a key twice: the last value),
// arrays as []any, numbers as json.Number, strings unescaped with invalid
// UTF-8 as U+FFFD.
func decodeValue(v []byte) any {
	i := skipSpace(v, 0)
	val, _ := decodeAt(v, i)
	return val
}

// decodeAt decodes the value at i in b and returns it and the index just
// past it.
func decodeAt(b []byte, i int) (any, int) {
	switch c := b[i]; c {
	case '{':
		m := map[string]any{}
		i = skipSpace(b, i+1)
		if b[i] == '}' {
			return m, i + 1
		}
		for {
			end := skipString(b, i)
			key := decodeString(b[i:end])
			i = skipSpace(b, end)
			i = skipSpace(b, i+1) // the colon
			var val any
			val, i = decodeAt(b, i)
			m[key] = val
			i = skipSpace(b, i)
			if b[i] == '}' {
				return m, i + 1
			}
			i = skipSpace(b, i+1) // the comma
		}
	case '[':
		a := []any{}
		i = skipSpace(b, i+1)
		if b[i] == ']' {
			return a, i + 1
		}
		for {
			var val any
			val, i = decodeAt(b, i)
			a = append(a, val)
			i = skipSpace(b, i)
			if b[i] == ']' {
				return a, i + 1
			}
			i = skipSpace(b, i+1) // the comma
		}
	case '"':
		end := skipString(b, i)
		return decodeString(b[i:end]), end
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case 'n':
		return nil, i + 4
	}
	end := skipValue(b, i)
	return json.Number(b[i:end]), end
}

// decodeString unescapes the JSON string v (valid JSON): as it is when it
// holds no escape and is valid UTF-8, else as encoding/json does.
func decodeString(v []byte) string {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	var out string
	_ = json.Unmarshal(v, &out)
	return out
}

// metaOf is what the direct road needs of a request's _meta (raw JSON,
// nil when absent): the protocol version it names and whether it names the
// client's capabilities, both as mcp-go reads them
// (mcpgo.Meta.ProtocolVersion, mcpgo.Meta.ClientCapabilities), and whether
// mcp-go decodes it at all. A client sends the same _meta on every call,
// so the answer is kept by its text (up to metaCacheSize texts).
func metaOf(raw []byte) metaInfo {
	if raw == nil || string(raw) == "null" {
		return metaInfo{ok: true}
	}
	metaCache.RLock()
	m, hit := metaCache.m[string(raw)]
	metaCache.RUnlock()
	if hit {
		return m
	}
	var meta *mcpgo.Meta
	if json.Unmarshal(raw, &meta) == nil {
		m = metaInfo{ok: true, version: meta.ProtocolVersion(), caps: meta.ClientCapabilities() != nil}
	}
	metaCache.Lock()
	if len(metaCache.m) < metaCacheSize {
		metaCache.m[string(raw)] = m
	}
	metaCache.Unlock()
	return m
}

// metaInfo is what metaOf reads of a _meta.
type metaInfo struct {
	ok      bool // mcp-go decodes it
	version string
	caps    bool
}

var metaCache = struct {
	sync.RWMutex
	m map[string]metaInfo
}{m: map[string]metaInfo{}}

// metaCacheSize bounds the _meta texts kept: past it, a new one is read
// each time it comes.
const metaCacheSize = 256
