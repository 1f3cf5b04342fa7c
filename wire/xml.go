package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/dialects"
)

// xmlEsc[c] is the escape of the ASCII byte c in XML text, as
// xml.EscapeText writes it, or "" when c stands for itself. Control
// characters that XML 1.0 does not allow become U+FFFD.
var xmlEsc = func() (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		t[c] = "\uFFFD"
	}
	t['"'] = "&#34;"
	t['\''] = "&#39;"
	t['&'] = "&amp;"
	t['<'] = "&lt;"
	t['>'] = "&gt;"
	t['\t'] = "&#x9;"
	t['\n'] = "&#xA;"
	t['\r'] = "&#xD;"
	return t
}()

// appendXMLText appends s escaped like xml.EscapeText: markup characters,
// quotes, tab, newline and carriage return as character references, and
// both invalid UTF-8 and characters outside the XML 1.0 Char production as
// U+FFFD. The result is also safe inside a double-quoted attribute.
func appendXMLText[S []byte | string](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if xmlEsc[c] == "" {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, xmlEsc[c]...)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 || r > 0xD7FF && r < 0xE000 || r == 0xFFFE || r == 0xFFFF {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// isXMLName reports whether s can be an element name as it is: ASCII
// letters, digits, '_', '-' and '.', not starting with a digit, '-' or '.',
// and not starting with "xml" in any case (reserved by XML 1.0). Narrower
// than the XML Name production on purpose, so that every parser, whatever
// edition of the name tables it follows, reads it the same.
func isXMLName[S []byte | string](s S) bool {
	if len(s) == 0 || len(s) >= 3 && strings.EqualFold(string(s[:3]), "xml") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case i > 0 && ('0' <= c && c <= '9' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// appendXMLOpen appends the unfinished start tag of the element for a
// column or object key: <name, or <column name="..." when name cannot be an
// element name. It returns the matching end tag's name.
func appendXMLOpen(dst []byte, name string) ([]byte, string) {
	dst = append(dst, '<')
	if isXMLName(name) {
		return append(dst, name...), name
	}
	dst = append(dst, `column name="`...)
	dst = appendXMLText(dst, name)
	return append(dst, '"'), "column"
}

// appendXMLElement appends a whole element: the start tag begun by
// appendXMLOpen is finished, then the value and the end tag follow; null is
// an empty element with null="true".
func appendXMLElement(dst []byte, name string, v any, depth int) []byte {
	dst, closeName := appendXMLOpen(dst, name)
	if raw, ok := v.(json.RawMessage); v == nil || ok && isJSONNull(raw) {
		return append(dst, ` null="true"/>`...)
	}
	dst = append(dst, '>')
	dst = appendXMLValue(dst, v, depth)
	dst = append(dst, "</"...)
	dst = append(dst, closeName...)
	return append(dst, '>')
}

// appendXMLValue appends the content of the element of a non-nil value.
func appendXMLValue(dst []byte, v any, depth int) []byte {
	switch v := v.(type) {
	case string:
		return appendXMLText(dst, v)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return appendTextFloat(dst, v, 64)
	case bool:
		return strconv.AppendBool(dst, v)
	case json.Number:
		return appendXMLText(dst, string(v))
	case time.Time:
		return v.AppendFormat(dst, time.RFC3339Nano)
	case []byte:
		return base64.StdEncoding.AppendEncode(dst, v)
	case json.RawMessage:
		if out, ok := appendXMLRawJSON(dst, v, depth); ok {
			return out // elements, as an array or object is written
		}
		return appendXMLText(dst, []byte(v))
	case []any:
		if depth >= maxDepth {
			return dst
		}
		for _, e := range v {
			if e == nil {
				dst = append(dst, `<item null="true"/>`...)
				continue
			}
			dst = append(dst, "<item>"...)
			dst = appendXMLValue(dst, e, depth+1)
			dst = append(dst, "</item>"...)
		}
		return dst
	case map[string]any:
		if depth >= maxDepth {
			return dst
		}
		for _, k := range sortedKeys(v) {
			dst = appendXMLElement(dst, k, v[k], depth+1)
		}
		return dst
	case float32:
		return appendTextFloat(dst, float64(v), 32)
	}
	if out, ok := appendOtherInt(dst, v); ok {
		return out
	}
	return appendXMLText(dst, fmt.Sprint(v))
}

// xmlEncoder writes
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<response><data><row><col>v</col>...</row>...</data><page number="N" size="S"/></response>
//
// with a final newline. A column, or a key of an object cell, that is not a
// safe element name (see isXMLName) is written <column name="...">v</column>;
// null is an empty element with null="true"; an array is a sequence of
// <item> elements and an object a sequence of elements named by its keys,
// a JSON value (json, jsonb; see appendXMLRawJSON) alike.
type xmlEncoder struct {
	open  []string // unfinished start tag of each column: <name or <column name="..."
	close []string // end tag of each column: </name> or </column>
}

func newXMLEncoder(cols []dialects.Column) *xmlEncoder {
	e := &xmlEncoder{open: make([]string, len(cols)), close: make([]string, len(cols))}
	for i, c := range cols {
		b, closeName := appendXMLOpen(nil, c.Name)
		e.open[i] = string(b)
		e.close[i] = "</" + closeName + ">"
	}
	return e
}

func (e *xmlEncoder) begin(dst []byte) []byte {
	return append(dst, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<response><data>"...)
}

func (e *xmlEncoder) row(dst []byte, _ int64, vals []any) []byte {
	dst = append(dst, "<row>"...)
	for j, v := range vals {
		dst = append(dst, e.open[j]...)
		if raw, ok := v.(json.RawMessage); v == nil || ok && isJSONNull(raw) {
			dst = append(dst, ` null="true"/>`...)
			continue
		}
		dst = append(dst, '>')
		dst = appendXMLValue(dst, v, 0)
		dst = append(dst, e.close[j]...)
	}
	return append(dst, "</row>"...)
}

func (e *xmlEncoder) end(dst []byte, _ int64, page *Page) []byte {
	dst = append(dst, "</data>"...)
	if page != nil {
		dst = append(dst, `<page number="`...)
		dst = strconv.AppendInt(dst, page.Number, 10)
		dst = append(dst, `" size="`...)
		dst = strconv.AppendInt(dst, page.Size, 10)
		if page.Total != nil {
			dst = append(dst, `" total="`...)
			dst = strconv.AppendInt(dst, *page.Total, 10)
		}
		dst = append(dst, `"/>`...)
	}
	return append(dst, "</response>\n"...)
}
