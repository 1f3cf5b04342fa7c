package wire

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// jsonSafe[c] reports whether the ASCII byte c needs no escape in a JSON
// string; yamlSafe also escapes DEL, which YAML does not allow unescaped.
var jsonSafe, yamlSafe = func() (j, y [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		j[c] = c != '"' && c != '\\'
		y[c] = j[c] && c != 0x7f
	}
	return j, y
}()

// appendQuoted appends s as a double-quoted JSON string, escaping like
// encoding/json without HTML escaping: quotes, backslashes, control
// characters, U+2028 and U+2029; each byte of invalid UTF-8 becomes \ufffd.
// With yaml set it also escapes what YAML double-quoted scalars may not hold
// raw (DEL, C1 controls, U+FEFF, U+FFFE, U+FFFF); the result is then a valid
// YAML 1.2 scalar as well as a JSON string.
func appendQuoted[S []byte | string](dst []byte, s S, yaml bool) []byte {
	safe := &jsonSafe
	if yaml {
		safe = &yamlSafe
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
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
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		// Convert only a rune's worth so the conversion stays on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' || yaml && (r <= 0x9f || r == 0xfeff || r >= 0xfffe && r <= 0xffff) {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', hex[r>>12], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
		} else {
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendValidUTF8 appends s, replacing each byte of invalid UTF-8 by U+FFFD.
func appendValidUTF8[S []byte | string](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// appendFloat appends a finite f the way encoding/json does (ES6 number to
// string): decimal notation, exponent notation below 1e-6 and from 1e21.
// bits is 32 for a float32 value.
func appendFloat(dst []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// nonFinite names NaN and the infinities the way JavaScript does, for the
// formats that write them as text. ok is false for a finite f.
func nonFinite(f float64) (name string, ok bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// appendTextFloat appends f as text for csv and xml.
func appendTextFloat(dst []byte, f float64, bits int) []byte {
	if name, ok := nonFinite(f); ok {
		return append(dst, name...)
	}
	return appendFloat(dst, f, bits)
}

// isValidNumber reports whether s is a JSON number literal.
func isValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	default:
		return false
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}

// sortedKeys returns the keys of an object cell in byte order.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// appendOtherInt appends v in decimal when it is one of the integer types
// other than int64 (which every format handles on its own), and reports
// whether it was one.
func appendOtherInt(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int16:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int8:
		return strconv.AppendInt(dst, int64(v), 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10), true
	case uint64:
		return strconv.AppendUint(dst, v, 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), true
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10), true
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10), true
	}
	return dst, false
}
