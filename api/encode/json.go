package encode

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
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
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case int32:
		return strconv.AppendInt(dst, int64(v), 10)
	case int16:
		return strconv.AppendInt(dst, int64(v), 10)
	case int8:
		return strconv.AppendInt(dst, int64(v), 10)
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(dst, v, 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10)
	case float32:
		return appendJSONFloat(dst, float64(v), 32)
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
	if !json.Valid(raw) {
		return appendQuoted(dst, raw, false)
	}
	return appendCompactJSON(dst, raw)
}

// appendCompactJSON appends valid JSON without insignificant whitespace.
// Inside strings it escapes U+2028 and U+2029 and replaces each byte of
// invalid UTF-8 by \ufffd, which json.Valid lets through.
func appendCompactJSON(dst []byte, raw []byte) []byte {
	inString := false
	start := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if !inString {
			switch c {
			case ' ', '\t', '\n', '\r':
				dst = append(dst, raw[start:i]...)
				i++
				start = i
				continue
			case '"':
				inString = true
			}
			i++
			continue
		}
		switch {
		case c == '\\':
			i += 2 // valid JSON: the escaped byte is ASCII and present
			continue
		case c == '"':
			inString = false
			i++
			continue
		case c < utf8.RuneSelf:
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, raw[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, raw[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, raw[start:]...)
}

// jsonEncoder writes json (with the envelope) and ndjson (without).
type jsonEncoder struct {
	// keys[i] opens the i-th member: `{"name":` for the first, `,"name":`
	// for the others.
	keys     []string
	envelope bool
}

func newJSONEncoder(cols []dialects.Column, envelope bool) *jsonEncoder {
	e := &jsonEncoder{keys: make([]string, len(cols)), envelope: envelope}
	var b []byte
	for i, c := range cols {
		b = b[:0]
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = appendQuoted(b, c.Name, false)
		b = append(b, ':')
		e.keys[i] = string(b)
	}
	return e
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
		dst = append(dst, e.keys[j]...)
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
		dst = append(dst, '}')
	}
	return append(dst, "}\n"...)
}
