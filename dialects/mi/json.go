package mi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The stored row data is handled as a small JSON value model: nil, bool,
// string, json.Number, []any and map[string]any. It is written the way
// mini-app-mcp (serde_json) writes it — compact, object keys sorted
// bytewise, integers as integers, floats in ryu's shortest form with ".0" on
// integral values, only '"', '\\' and control characters escaped — so both
// programs store byte-identical text for the same value.

var errNotFinite = errors.New("number is not finite")

// toValue converts a Go value handed in by the engine into the JSON value
// model. Numbers become json.Number, RawMessage is parsed, anything else is
// round-tripped through encoding/json.
func toValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		s, err := canonicalNumber(string(x))
		if err != nil {
			return nil, err
		}
		return json.Number(s), nil
	case float64:
		// The engine hands numbers over as float64, which cannot tell 5
		// from 5.0; a whole value is stored as the integer a JSON client
		// most likely sent. json.Number keeps the literal's own form.
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(x), 10)), nil
		}
		s, err := formatFloat(x)
		if err != nil {
			return nil, err
		}
		return json.Number(s), nil
	case float32:
		return toValue(float64(x))
	case int:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int8:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int16:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint8:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint16:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint32:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := toValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := toValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case json.RawMessage:
		return decodeJSON(x)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("unsupported value of type %T", v)
	}
	return decodeJSON(b)
}

// decodeJSON parses one JSON text into the value model, numbers as
// json.Number. Trailing data is an error.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("invalid JSON: trailing data")
	}
	return v, nil
}

// decodeObject parses stored row data, which must be a JSON object.
func decodeObject(s string) (map[string]any, error) {
	v, err := decodeJSON([]byte(s))
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("stored data is not a JSON object")
	}
	return m, nil
}

// encodeJSON writes a value of the model (or any value toValue accepts) as
// compact JSON with sorted keys.
func encodeJSON(v any) (string, error) {
	b, err := appendJSON(nil, v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// CompactJSON writes v (a value of the model above, or any value toValue
// accepts) the way a row's data is stored and answered: serde_json's
// compact form, keys sorted bytewise, number literals in serde_json's own
// form (5 stays 5, 5.0 stays 5.0).
func CompactJSON(v any) ([]byte, error) { return appendJSON(nil, v) }

func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendString(b, x), nil
	case json.Number:
		s, err := canonicalNumber(string(x))
		if err != nil {
			return nil, err
		}
		return append(b, s...), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	c, err := toValue(v)
	if err != nil {
		return nil, err
	}
	return appendJSON(b, c)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as serde_json does: '"', '\\' and control characters
// are escaped, everything else (including '<', '&', U+2028) is kept; invalid
// UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// canonicalNumber checks a JSON number literal and rewrites it the way
// serde_json re-serializes it: integers within the int64/uint64 range stay
// integers, everything else is an f64 in ryu's form ("5.0", "1e20").
func canonicalNumber(s string) (string, error) {
	if !validNumber(s) {
		return "", fmt.Errorf("invalid number %q", s)
	}
	if !strings.ContainsAny(s, ".eE") && s != "-0" {
		if s[0] == '-' {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return strconv.FormatInt(n, 10), nil
			}
		} else if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return strconv.FormatUint(n, 10), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("number %s is out of range", s)
	}
	return formatFloat(f)
}

// validNumber reports whether s follows the JSON number grammar.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// formatFloat renders f like Rust's ryu crate (used by serde_json): the
// shortest round-trip digits, plain notation with ".0" for magnitudes in
// [1e-5, 1e16), exponent notation ("1e20", "1.5e-7") outside.
func formatFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", errNotFinite
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0", nil
		}
		return "0.0", nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	var out strings.Builder
	if s[0] == '-' {
		out.WriteByte('-')
		s = s[1:]
	}
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	n := len(digits)
	kk := e + 1 // position of the decimal point relative to the digits
	k := kk - n // exponent of the last digit
	switch {
	case k >= 0 && kk <= 16:
		out.WriteString(digits)
		out.WriteString(strings.Repeat("0", k))
		out.WriteString(".0")
	case kk > 0 && kk <= 16:
		out.WriteString(digits[:kk])
		out.WriteByte('.')
		out.WriteString(digits[kk:])
	case kk > -5 && kk <= 0:
		out.WriteString("0.")
		out.WriteString(strings.Repeat("0", -kk))
		out.WriteString(digits)
	case n == 1:
		out.WriteString(digits)
		out.WriteByte('e')
		out.WriteString(strconv.Itoa(kk - 1))
	default:
		out.WriteString(digits[:1])
		out.WriteByte('.')
		out.WriteString(digits[1:])
		out.WriteByte('e')
		out.WriteString(strconv.Itoa(kk - 1))
	}
	return out.String(), nil
}

// jsonType names the JSON type of a model value as mini-app's validation
// messages do.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// cellOf turns a decoded JSON value into a Rows cell: objects become their
// compact sorted-key JSON text, arrays keep their elements as cells.
func cellOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		b, err := appendJSON(nil, x)
		if err != nil {
			// Only a number literal serde_json would never write (e.g.
			// 1e400) gets here; keep it as encoding/json writes it.
			b, _ = json.Marshal(x)
		}
		return json.RawMessage(b)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cellOf(e)
		}
		return out
	}
	return v
}
