package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
)

// AppendJSONValue appends the JSON encoding of v to dst and returns the
// extended buffer. v follows the cell rules of the package (see the package
// documentation): the types of dialects.Rows cells, integers and floats of
// every size, []any and map[string]any (keys sorted); any other value is
// written as the string fmt.Sprint gives. Strings are escaped like
// encoding/json without HTML escaping.
func AppendJSONValue(dst []byte, v any) []byte {
	return appendJSON(dst, v, 0)
}

func appendJSON(dst []byte, v any, depth int) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendQuoted(dst, v, false)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return appendJSONFloat(dst, v, 64)
	case bool:
		return strconv.AppendBool(dst, v)
	case json.Number:
		if isValidNumber(string(v)) {
			return append(dst, v...)
		}
		return appendQuoted(dst, string(v), false)
	case time.Time:
		dst = append(dst, '"')
		dst = v.AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"')
	case json.RawMessage:
		return appendRawJSON(dst, v)
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, '"')
	case []any:
		if depth >= maxDepth {
			return append(dst, "null"...)
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e, depth+1)
		}
		return append(dst, ']')
	case map[string]any:
		if depth >= maxDepth {
			return append(dst, "null"...)
		}
		dst = append(dst, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, k, false)
			dst = append(dst, ':')
			dst = appendJSON(dst, v[k], depth+1)
		}
		return append(dst, '}')
	case float32:
		return appendJSONFloat(dst, float64(v), 32)
	}
	if out, ok := appendOtherInt(dst, v); ok {
		return out
	}
	return appendQuoted(dst, fmt.Sprint(v), false)
}

// appendJSONFloat writes NaN and the infinities, which JSON numbers cannot
// be, as the strings "NaN", "Infinity" and "-Infinity".
func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if name, ok := nonFinite(f); ok {
		dst = append(dst, '"')
		dst = append(dst, name...)
		return append(dst, '"')
	}
	return appendFloat(dst, f, bits)
}

// appendRawJSON appends valid raw JSON compacted (so ndjson stays one line
// per row) and invalid raw JSON as a string. An empty message is null.
func appendRawJSON(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if out, ok := appendCompactJSON(dst, raw); ok {
		return out
	}
	return appendQuoted(dst, raw, false)
}

// maxRawDepth bounds the nesting of raw JSON, like encoding/json's scanner.
const maxRawDepth = 10000

// appendCompactJSON validates raw as one JSON value and appends it without
// insignificant whitespace, in a single pass and without allocating. Inside
// strings it escapes U+2028 and U+2029, as json.Compact does, and replaces
// each byte of invalid UTF-8 by \ufffd. When raw is not valid JSON it
// returns ok false and dst truncated to its original length.
func appendCompactJSON(dst []byte, raw []byte) (_ []byte, ok bool) {
	c := compactor{src: raw, dst: dst}
	if c.value(0) && c.skipSpace() == len(raw) {
		return c.dst, true
	}
	return dst, false
}

// compactor is the state of appendCompactJSON: src is read from i on.
type compactor struct {
	src []byte
	i   int
	dst []byte
}

// skipSpace skips insignificant whitespace and returns the new position.
func (c *compactor) skipSpace() int {
	for c.i < len(c.src) {
		switch c.src[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return c.i
		}
	}
	return c.i
}

// literal consumes and copies the keyword lit.
func (c *compactor) literal(lit string) bool {
	if len(c.src)-c.i < len(lit) || string(c.src[c.i:c.i+len(lit)]) != lit {
		return false
	}
	c.dst = append(c.dst, lit...)
	c.i += len(lit)
	return true
}

func (c *compactor) value(depth int) bool {
	if c.skipSpace() == len(c.src) {
		return false
	}
	switch b := c.src[c.i]; {
	case b == '"':
		return c.string()
	case b == '{':
		return c.container(depth, '}')
	case b == '[':
		return c.container(depth, ']')
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || '0' <= b && b <= '9':
		return c.number()
	}
	return false
}

// container consumes an object (closing '}') or an array (closing ']').
func (c *compactor) container(depth int, closing byte) bool {
	if depth >= maxRawDepth {
		return false
	}
	c.dst = append(c.dst, c.src[c.i])
	c.i++
	if c.skipSpace() < len(c.src) && c.src[c.i] == closing {
		c.dst = append(c.dst, closing)
		c.i++
		return true
	}
	for {
		if closing == '}' {
			if c.skipSpace() == len(c.src) || c.src[c.i] != '"' || !c.string() {
				return false
			}
			if c.skipSpace() == len(c.src) || c.src[c.i] != ':' {
				return false
			}
			c.dst = append(c.dst, ':')
			c.i++
		}
		if !c.value(depth + 1) {
			return false
		}
		if c.skipSpace() == len(c.src) {
			return false
		}
		switch c.src[c.i] {
		case ',':
			c.dst = append(c.dst, ',')
			c.i++
		case closing:
			c.dst = append(c.dst, closing)
			c.i++
			return true
		default:
			return false
		}
	}
}

// string consumes a string, checking its escapes.
func (c *compactor) string() bool {
	src := c.src
	c.dst = append(c.dst, '"')
	c.i++
	start := c.i
	for c.i < len(src) {
		b := src[c.i]
		switch {
		case b == '"':
			c.dst = append(c.dst, src[start:c.i+1]...)
			c.i++
			return true
		case b == '\\':
			if c.i+1 == len(src) {
				return false
			}
			switch src[c.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.i += 2
			case 'u':
				if len(src)-c.i < 6 {
					return false
				}
				for _, h := range src[c.i+2 : c.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				c.i += 6
			default:
				return false
			}
		case b < 0x20:
			return false
		case b < utf8.RuneSelf:
			c.i++
		default:
			r, size := utf8.DecodeRune(src[c.i:])
			switch {
			case r == utf8.RuneError && size == 1:
				c.dst = append(c.dst, src[start:c.i]...)
				c.dst = append(c.dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				c.dst = append(c.dst, src[start:c.i]...)
				c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			default:
				c.i += size
				continue
			}
			c.i += size
			start = c.i
		}
	}
	return false
}

// number consumes a number by the JSON grammar.
func (c *compactor) number() bool {
	src, i := c.src, c.i
	digits := func() int {
		n := 0
		for i < len(src) && '0' <= src[i] && src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(src) && src[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	c.dst = append(c.dst, src[c.i:i]...)
	c.i = i
	return true
}

// jsonEncoder writes json (with the envelope) and ndjson (without).
type jsonEncoder struct {
	// keys[ends[i-1]:ends[i]] opens the i-th member: `{"name":` for the
	// first, `,"name":` for the others.
	keys     []byte
	ends     []int
	envelope bool
}

// jsonEncoders keeps encoders, with the memory of their keys, for the
// next result (Stream puts each back once it has written its rows).
var jsonEncoders = sync.Pool{New: func() any { return new(jsonEncoder) }}

// maxPooledKeys bounds the keys of an encoder kept for reuse.
const maxPooledKeys = 4 << 10

func newJSONEncoder(cols []dialects.Column, envelope bool) *jsonEncoder {
	e := jsonEncoders.Get().(*jsonEncoder)
	e.envelope = envelope
	b, ends := e.keys[:0], e.ends[:0]
	for i, c := range cols {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = appendQuoted(b, c.Name, false)
		b = append(b, ':')
		ends = append(ends, len(b))
	}
	e.keys, e.ends = b, ends
	return e
}

// release puts e back for another result; e is not used again.
func (e *jsonEncoder) release() {
	if cap(e.keys) <= maxPooledKeys {
		jsonEncoders.Put(e)
	}
}

// key is the text that opens the j-th member.
func (e *jsonEncoder) key(j int) []byte {
	start := 0
	if j > 0 {
		start = e.ends[j-1]
	}
	return e.keys[start:e.ends[j]]
}

func (e *jsonEncoder) begin(dst []byte) []byte {
	if e.envelope {
		return append(dst, `{"data":[`...)
	}
	return dst
}

func (e *jsonEncoder) row(dst []byte, i int64, vals []any) []byte {
	if e.envelope && i > 0 {
		dst = append(dst, ',')
	}
	if len(vals) == 0 {
		dst = append(dst, '{')
	}
	for j, v := range vals {
		dst = append(dst, e.key(j)...)
		dst = appendJSON(dst, v, 0)
	}
	dst = append(dst, '}')
	if !e.envelope {
		dst = append(dst, '\n')
	}
	return dst
}

func (e *jsonEncoder) end(dst []byte, _ int64, page *Page) []byte {
	if !e.envelope {
		return dst
	}
	dst = append(dst, ']')
	if page != nil {
		dst = append(dst, `,"page":{"number":`...)
		dst = strconv.AppendInt(dst, page.Number, 10)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, page.Size, 10)
		if page.Total != nil {
			dst = append(dst, `,"total":`...)
			dst = strconv.AppendInt(dst, *page.Total, 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, "}\n"...)
}
