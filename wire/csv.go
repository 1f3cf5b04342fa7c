package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
)

// csvEncoder writes a header line of column names, then one record per row,
// fields separated by commas and records ended by "\n". Fields are quoted by
// the rules of encoding/csv, with one addition taken from PostgreSQL's CSV:
// an empty string is written "" so that it differs from null, which is an
// empty unquoted field. (A row of a single null column is therefore an empty
// line, which some readers, encoding/csv among them, skip.)
type csvEncoder struct {
	header  []byte
	scratch []byte // JSON text of nested and raw JSON cells
}

func newCSVEncoder(cols []dialects.Column) *csvEncoder {
	e := &csvEncoder{}
	for i, c := range cols {
		if i > 0 {
			e.header = append(e.header, ',')
		}
		e.header = appendCSVField(e.header, c.Name)
	}
	e.header = append(e.header, '\n')
	return e
}

func (e *csvEncoder) begin(dst []byte) []byte { return append(dst, e.header...) }

func (e *csvEncoder) end(dst []byte, _ int64, _ *Page) []byte { return dst }

func (e *csvEncoder) row(dst []byte, _ int64, vals []any) []byte {
	for j, v := range vals {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendCell(dst, v)
	}
	return append(dst, '\n')
}

func (e *csvEncoder) appendCell(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return dst
	case string:
		return appendCSVField(dst, v)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return appendTextFloat(dst, v, 64)
	case bool:
		return strconv.AppendBool(dst, v)
	case json.Number:
		return appendCSVField(dst, string(v))
	case time.Time:
		return v.AppendFormat(dst, time.RFC3339Nano)
	case []byte:
		if len(v) == 0 {
			return append(dst, '"', '"') // empty, not null
		}
		return base64.StdEncoding.AppendEncode(dst, v)
	case json.RawMessage:
		if len(v) == 0 {
			return dst
		}
		var ok bool
		if e.scratch, ok = appendCompactJSON(e.scratch[:0], v); !ok {
			return appendCSVField(dst, []byte(v))
		}
		return appendCSVField(dst, e.scratch)
	case []any, map[string]any:
		e.scratch = appendJSON(e.scratch[:0], v, 0)
		return appendCSVField(dst, e.scratch)
	case float32:
		return appendTextFloat(dst, float64(v), 32)
	}
	if out, ok := appendOtherInt(dst, v); ok {
		return out
	}
	return appendCSVField(dst, fmt.Sprint(v))
}

// appendCSVField appends s as one CSV field: quoted when encoding/csv would
// quote it (a comma, quote, CR or LF inside, a leading space, or the
// PostgreSQL end marker \.) and when empty; quotes inside are doubled and
// each byte of invalid UTF-8 becomes U+FFFD.
func appendCSVField[S []byte | string](dst []byte, s S) []byte {
	if len(s) == 0 {
		return append(dst, '"', '"')
	}
	quote := len(s) == 2 && s[0] == '\\' && s[1] == '.'
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ',' || c == '"' || c == '\n' || c == '\r':
			quote = true
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !quote {
		r, _ := utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
		quote = unicode.IsSpace(r)
	}
	if !quote {
		if ascii {
			return append(dst, s...)
		}
		return appendValidUTF8(dst, s)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = appendValidUTF8(dst, s[start:i+1])
			dst = append(dst, '"')
			start = i + 1
		}
	}
	dst = appendValidUTF8(dst, s[start:])
	return append(dst, '"')
}
