package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// yamlEncoder writes a block mapping, row by row:
//
//	data:
//	  - col: value
//	    col2: value
//	page:
//	  number: N
//	  size: S
//
// or "data: []" for an empty result. Strings are always JSON-style
// double-quoted scalars (valid YAML 1.2), so no string can be read back as
// another type; numbers, booleans and null are plain; nested arrays and
// objects, and JSON values (json, jsonb; see appendYAMLRawJSON) alike, are
// one-line flow collections.
type yamlEncoder struct {
	// keys[i] starts the line of the i-th column: "  - key: " for the first,
	// "    key: " for the others.
	keys []string
}

func newYAMLEncoder(cols []dialects.Column) *yamlEncoder {
	e := &yamlEncoder{keys: make([]string, len(cols))}
	var b []byte
	for i, c := range cols {
		b = b[:0]
		if i == 0 {
			b = append(b, "  - "...)
		} else {
			b = append(b, "    "...)
		}
		start := len(b)
		b = appendYAMLKey(b, c.Name)
		if len(b)-start > maxImplicitKey {
			b = slices.Insert(b, start, '?', ' ')
			b = append(b, "\n    : "...)
		} else {
			b = append(b, ": "...)
		}
		e.keys[i] = string(b)
	}
	return e
}

func (e *yamlEncoder) begin(dst []byte) []byte { return dst }

func (e *yamlEncoder) row(dst []byte, i int64, vals []any) []byte {
	if i == 0 {
		dst = append(dst, "data:\n"...)
	}
	if len(vals) == 0 {
		return append(dst, "  - {}\n"...)
	}
	for j, v := range vals {
		dst = append(dst, e.keys[j]...)
		dst = appendYAML(dst, v, 0)
		dst = append(dst, '\n')
	}
	return dst
}

func (e *yamlEncoder) end(dst []byte, n int64, page *Page) []byte {
	if n == 0 {
		dst = append(dst, "data: []\n"...)
	}
	if page != nil {
		dst = append(dst, "page:\n  number: "...)
		dst = strconv.AppendInt(dst, page.Number, 10)
		dst = append(dst, "\n  size: "...)
		dst = strconv.AppendInt(dst, page.Size, 10)
		if page.Total != nil {
			dst = append(dst, "\n  total: "...)
			dst = strconv.AppendInt(dst, *page.Total, 10)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// maxImplicitKey is the longest key written in the implicit "key: value"
// form; YAML limits implicit keys to 1024 characters, so longer ones use the
// explicit "? key" form.
const maxImplicitKey = 1000

// appendYAMLKey appends a mapping key: plain when it is an identifier that
// YAML 1.1 or 1.2 cannot read as anything but a string, quoted otherwise.
func appendYAMLKey(dst []byte, k string) []byte {
	if !isPlainYAMLKey(k) {
		return appendQuoted(dst, k, true)
	}
	return append(dst, k...)
}

func isPlainYAMLKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	switch strings.ToLower(k) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

// appendYAMLFloat writes NaN and the infinities as .nan, .inf and -.inf, and
// keeps a float that looks integral a float by adding ".0".
func appendYAMLFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, ".nan"...)
	case math.IsInf(f, 1):
		return append(dst, ".inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-.inf"...)
	}
	start := len(dst)
	dst = appendFloat(dst, f, bits)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// appendYAML appends a value as a YAML scalar or flow collection.
func appendYAML(dst []byte, v any, depth int) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendQuoted(dst, v, true)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return appendYAMLFloat(dst, v, 64)
	case bool:
		return strconv.AppendBool(dst, v)
	case json.Number:
		if isValidNumber(string(v)) {
			return append(dst, v...)
		}
		return appendQuoted(dst, string(v), true)
	case time.Time:
		dst = append(dst, '"')
		dst = v.AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"')
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, '"')
	case json.RawMessage:
		if out, ok := appendYAMLRawJSON(dst, v, depth); ok {
			return out // a flow collection, as an array or object is written
		}
		return appendQuoted(dst, []byte(v), true)
	case []any:
		if depth >= maxDepth {
			return append(dst, "null"...)
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendYAML(dst, e, depth+1)
		}
		return append(dst, ']')
	case map[string]any:
		if depth >= maxDepth {
			return append(dst, "null"...)
		}
		dst = append(dst, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			start := len(dst)
			dst = appendQuoted(dst, k, true)
			if len(dst)-start > maxImplicitKey {
				dst = slices.Insert(dst, start, '?', ' ')
				dst = append(dst, " : "...)
			} else {
				dst = append(dst, ": "...)
			}
			dst = appendYAML(dst, v[k], depth+1)
		}
		return append(dst, '}')
	case float32:
		return appendYAMLFloat(dst, float64(v), 32)
	}
	if out, ok := appendOtherInt(dst, v); ok {
		return out
	}
	return appendQuoted(dst, fmt.Sprint(v), true)
}
