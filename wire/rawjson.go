package wire

import (
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// A JSON value of the database (a json or jsonb cell, json.RawMessage) is
// written by the structured formats the way they write arrays and objects,
// and as compactly: YAML as a one-line flow collection ({"a": [1, 2]}),
// XML as elements (<a><item>1</item><item>2</item></a>), JSON and NDJSON
// as compact JSON; the text formats (CSV) hold its compact JSON text. The
// database's own spacing never shows. Object members keep the order the
// database gives them. A value that is not valid JSON is written as text.
//
// The walkers below read the value once compacted by appendCompactJSON
// (valid, no insignificant space) and write without allocating: the
// compacted text and each decoded string are kept after the end of dst
// while they are read, and the output is moved down over them.

// appendYAMLRawJSON appends raw as a YAML flow value; ok is false (and
// dst unchanged) when raw is not one valid JSON value.
func appendYAMLRawJSON(dst []byte, raw []byte, depth int) (_ []byte, ok bool) {
	start := len(dst)
	if dst, ok = appendCompactJSON(dst, raw); !ok {
		return dst, false
	}
	w := rawWalker{src: dst[start:]}
	mid := len(dst)
	dst = w.yaml(dst, depth)
	return dst[:start+copy(dst[start:], dst[mid:])], true
}

// appendXMLRawJSON appends raw as the content of an XML element (JSON null
// as nothing: callers write null="true" for it, see isJSONNull); ok is
// false (and dst unchanged) when raw is not one valid JSON value.
func appendXMLRawJSON(dst []byte, raw []byte, depth int) (_ []byte, ok bool) {
	start := len(dst)
	if dst, ok = appendCompactJSON(dst, raw); !ok {
		return dst, false
	}
	w := rawWalker{src: dst[start:]}
	mid := len(dst)
	dst = w.xml(dst, depth)
	return dst[:start+copy(dst[start:], dst[mid:])], true
}

// isJSONNull reports whether raw is the JSON literal null (with any
// surrounding space).
func isJSONNull(raw []byte) bool {
	i, j := 0, len(raw)
	for i < j && isJSONSpace(raw[i]) {
		i++
	}
	for j > i && isJSONSpace(raw[j-1]) {
		j--
	}
	return string(raw[i:j]) == "null"
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// rawWalker reads one compact, valid JSON value from src[i:].
type rawWalker struct {
	src []byte
	i   int
}

// yaml appends the value at w.i as YAML: strings double-quoted as every
// YAML string of the package, numbers, true, false and null plain, arrays
// and objects as flow collections.
func (w *rawWalker) yaml(dst []byte, depth int) []byte {
	switch w.src[w.i] {
	case '{', '[':
		if depth >= maxDepth {
			w.skip()
			return append(dst, "null"...)
		}
		open := w.src[w.i]
		w.i++
		dst = append(dst, open)
		for first := true; w.src[w.i] != '}' && w.src[w.i] != ']'; first = false {
			if !first {
				w.i++ // ','
				dst = append(dst, ", "...)
			}
			if open == '{' {
				k := len(dst)
				dst = w.str(dst, true)
				w.i++ // ':'
				if len(dst)-k > maxImplicitKey {
					dst = slices.Insert(dst, k, '?', ' ')
					dst = append(dst, " : "...)
				} else {
					dst = append(dst, ": "...)
				}
			}
			dst = w.yaml(dst, depth+1)
		}
		w.i++
		if open == '{' {
			return append(dst, '}')
		}
		return append(dst, ']')
	case '"':
		return w.str(dst, true)
	}
	return w.literal(dst)
}

// xml appends the value at w.i as element content: an object as one
// element per member, an array as <item> elements, null as nothing.
func (w *rawWalker) xml(dst []byte, depth int) []byte {
	switch w.src[w.i] {
	case '{', '[':
		if depth >= maxDepth {
			w.skip()
			return dst
		}
		open := w.src[w.i]
		w.i++
		for w.src[w.i] != '}' && w.src[w.i] != ']' {
			if w.src[w.i] == ',' {
				w.i++
			}
			// The element's name is written in dst at nameAt (n bytes), or
			// nameAt is -1 for <column name="…">.
			var nameAt, n int
			if open == '[' {
				dst = append(dst, "<item"...)
				nameAt, n = len(dst)-4, 4
			} else {
				dst, nameAt, n = w.xmlOpen(dst)
			}
			if w.src[w.i] == 'n' { // null
				w.literal(nil)
				dst = append(dst, ` null="true"/>`...)
				continue
			}
			dst = append(dst, '>')
			dst = w.xml(dst, depth+1)
			dst = append(dst, '<', '/')
			if nameAt < 0 {
				dst = append(dst, "column"...)
			} else {
				dst = append(dst, dst[nameAt:nameAt+n]...)
			}
			dst = append(dst, '>')
		}
		w.i++
		return dst
	case '"':
		a := len(dst)
		dst = w.unquote(dst)
		s := dst[a:]
		dst = appendXMLText(dst, s)
		return dst[:a+copy(dst[a:], dst[a+len(s):])]
	case 'n':
		w.literal(nil)
		return dst
	}
	return w.literal(dst)
}

// xmlOpen reads an object member's key and appends the unfinished start
// tag of its element: <key, or <column name="key" when the key cannot be
// an element name (see appendXMLOpen). It returns where the key is written
// in dst and its length, or -1 for a <column> element.
func (w *rawWalker) xmlOpen(dst []byte) (_ []byte, nameAt, n int) {
	a := len(dst)
	dst = w.unquote(dst)
	w.i++ // ':'
	key := dst[a:]
	if isXMLName(key) {
		return slices.Insert(dst, a, '<'), a + 1, len(key)
	}
	dst = append(dst, `<column name="`...)
	dst = appendXMLText(dst, key)
	dst = append(dst, '"')
	return dst[:a+copy(dst[a:], dst[a+len(key):])], -1, 0
}

// str appends the string at w.i double-quoted as appendQuoted does.
func (w *rawWalker) str(dst []byte, yaml bool) []byte {
	a := len(dst)
	dst = w.unquote(dst)
	s := dst[a:]
	dst = appendQuoted(dst, s, yaml)
	return dst[:a+copy(dst[a:], dst[a+len(s):])]
}

// unquote appends the decoded content of the string at w.i (valid JSON,
// so every escape is well formed; a lone surrogate becomes U+FFFD).
func (w *rawWalker) unquote(dst []byte) []byte {
	w.i++ // '"'
	for {
		c := w.src[w.i]
		switch {
		case c == '"':
			w.i++
			return dst
		case c != '\\':
			dst = append(dst, c)
			w.i++
			continue
		}
		w.i++
		switch e := w.src[w.i]; e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := w.hex4(w.i + 1)
			w.i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if w.i+6 < len(w.src) && w.src[w.i+1] == '\\' && w.src[w.i+2] == 'u' {
					r2 = w.hex4(w.i + 3)
				}
				if r = utf16.DecodeRune(r, r2); r != utf8.RuneError {
					w.i += 6
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
		w.i++
	}
}

// hex4 reads the four hex digits at src[i:].
func (w *rawWalker) hex4(i int) rune {
	var r rune
	for _, c := range w.src[i : i+4] {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// literal appends a number, true, false or null as it is.
func (w *rawWalker) literal(dst []byte) []byte {
	start := w.i
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case ',', ']', '}', ':':
			return append(dst, w.src[start:w.i]...)
		}
		w.i++
	}
	return append(dst, w.src[start:w.i]...)
}

// skip passes over the value at w.i.
func (w *rawWalker) skip() {
	depth := 0
	for inString := false; ; w.i++ {
		c := w.src[w.i]
		switch {
		case inString:
			if c == '\\' {
				w.i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				w.i++
				return
			}
		}
	}
}
