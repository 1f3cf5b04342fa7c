package ch

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// colType is a ClickHouse column type, parsed from the text the server
// reports ("Nullable(Decimal(18, 4))", "LowCardinality(String)",
// "Array(Nullable(DateTime('UTC')))").
type colType struct {
	full     string   // as the server spells it
	base     string   // without the Nullable and LowCardinality wrappers
	name     string   // the base type's name: "Decimal", "DateTime64", "Array" …
	args     []string // the base type's arguments as written
	nullable bool
	elem     *colType // element type of an Array
	kind     dialects.Kind
	scale    int // digits after the point of a Decimal, precision of a DateTime64
	size     int // length of a FixedString
}

// castType is the type a value is cast to before it is written: the full
// type without LowCardinality, which ClickHouse converts to by itself and
// which old servers refuse in expressions.
func (t *colType) castType() string {
	if t.nullable {
		return "Nullable(" + t.base + ")"
	}
	return t.base
}

// parseType parses a type as system.columns or a result header spells it.
// A type it does not understand is kept by name with KindOther.
func parseType(s string) *colType {
	s = strings.TrimSpace(s)
	t := &colType{full: s}
	inner := s
	for {
		name, args := splitType(inner)
		switch {
		case name == "Nullable" && len(args) == 1:
			t.nullable = true
			inner = strings.TrimSpace(args[0])
			continue
		case name == "LowCardinality" && len(args) == 1:
			inner = strings.TrimSpace(args[0])
			continue
		}
		t.base, t.name, t.args = inner, name, args
		break
	}
	t.kind = dialects.KindOther
	switch t.name {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32":
		t.kind = dialects.KindInt
	case "UInt64", "Int128", "UInt128", "Int256", "UInt256":
		// Beyond int64: kept exact as a decimal literal.
		t.kind = dialects.KindDecimal
	case "Float32", "Float64":
		t.kind = dialects.KindFloat
	case "Decimal":
		t.kind = dialects.KindDecimal
		if len(t.args) == 2 {
			t.scale, _ = strconv.Atoi(strings.TrimSpace(t.args[1]))
		}
	case "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		t.kind = dialects.KindDecimal
		if len(t.args) == 1 {
			t.scale, _ = strconv.Atoi(strings.TrimSpace(t.args[0]))
		}
	case "Bool":
		t.kind = dialects.KindBool
	case "String", "Enum8", "Enum16":
		t.kind = dialects.KindString
	case "FixedString":
		t.kind = dialects.KindString
		if len(t.args) == 1 {
			t.size, _ = strconv.Atoi(strings.TrimSpace(t.args[0]))
		}
	case "UUID":
		t.kind = dialects.KindUUID
	case "Date", "Date32":
		t.kind = dialects.KindDate
	case "DateTime":
		t.kind = dialects.KindTimestampTZ
	case "DateTime64":
		t.kind = dialects.KindTimestampTZ
		if len(t.args) >= 1 {
			t.scale, _ = strconv.Atoi(strings.TrimSpace(t.args[0]))
		}
	case "Array":
		if len(t.args) == 1 {
			t.kind = dialects.KindArray
			t.elem = parseType(t.args[0])
		}
	}
	return t
}

// splitType splits "Name(a, b)" into its name and top-level arguments,
// minding quotes (enum names, time zones) and nested parentheses.
func splitType(s string) (string, []string) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return s, nil
	}
	name := strings.TrimSpace(s[:open])
	body := s[open+1 : len(s)-1]
	var args []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inQuote:
			if c == '\\' {
				i++
			} else if c == '\'' {
				inQuote = false
			}
		case c == '\'':
			inQuote = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(body[start:]); rest != "" || len(args) > 0 {
		args = append(args, rest)
	}
	return name, args
}

// Normalization of ClickHouse values into the neutral cells of
// dialects.Rows, by type:
//
//	Int8…Int64, UInt8…UInt32          int64
//	UInt64, (U)Int128, (U)Int256      json.Number (exact)
//	Float32, Float64                  float64 (Float32 via its shortest decimal); NaN, ±Infinity as string
//	Decimal(P, S)                     json.Number with exactly S digits after the point
//	Bool                              bool
//	String, Enum8/16                  string
//	FixedString(N)                    string without its trailing NUL padding
//	UUID                              string, canonical lower-case
//	Date, Date32                      string "2006-01-02"
//	DateTime, DateTime64              time.Time in UTC
//	Array(T)                          []any of elements normalized alike
//	Nullable(T), LowCardinality(T)    as T; NULL is nil
//	anything else                     string of its text form
func normalize(t *colType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, nil
		}
		return normalize(t, rv.Elem().Interface())
	}
	switch t.name {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32":
		switch x := v.(type) {
		case int8:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case int32:
			return int64(x), nil
		case int64:
			return x, nil
		case uint8:
			return int64(x), nil
		case uint16:
			return int64(x), nil
		case uint32:
			return int64(x), nil
		case bool: // UInt8 read as bool by some driver paths
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case "UInt64":
		if x, ok := v.(uint64); ok {
			return json.Number(strconv.FormatUint(x, 10)), nil
		}
	case "Int128", "UInt128", "Int256", "UInt256":
		switch x := v.(type) {
		case big.Int:
			return json.Number(x.String()), nil
		case fmt.Stringer:
			return json.Number(x.String()), nil
		}
	case "Float32":
		if x, ok := v.(float32); ok {
			if s, ok := specialFloat(float64(x)); ok {
				return s, nil
			}
			// float64(x) would show 1.1 as 1.100000023841858.
			return strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		}
	case "Float64":
		if x, ok := v.(float64); ok {
			if s, ok := specialFloat(x); ok {
				return s, nil
			}
			return x, nil
		}
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		// shopspring/decimal, which the driver scans into; String would
		// drop trailing zeros.
		if x, ok := v.(interface{ StringFixed(places int32) string }); ok {
			return json.Number(x.StringFixed(int32(t.scale))), nil
		}
	case "Bool":
		if x, ok := v.(bool); ok {
			return x, nil
		}
	case "String", "Enum8", "Enum16":
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case "FixedString":
		switch x := v.(type) {
		case string:
			return strings.TrimRight(x, "\x00"), nil
		case []byte:
			return strings.TrimRight(string(x), "\x00"), nil
		}
	case "UUID":
		switch x := v.(type) {
		case string:
			return strings.ToLower(x), nil
		case fmt.Stringer: // google/uuid
			return strings.ToLower(x.String()), nil
		}
	case "Date", "Date32":
		if x, ok := v.(time.Time); ok {
			return x.Format(time.DateOnly), nil
		}
	case "DateTime", "DateTime64":
		if x, ok := v.(time.Time); ok {
			return x.UTC(), nil
		}
	case "Array":
		rv := reflect.ValueOf(v)
		if t.elem != nil && (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) {
			out := make([]any, rv.Len())
			for i := range out {
				e, err := normalize(t.elem, rv.Index(i).Interface())
				if err != nil {
					return nil, err
				}
				out[i] = e
			}
			return out, nil
		}
	default:
		return textOf(v), nil
	}
	return nil, fmt.Errorf("ch: unexpected %T for a %s value", v, t.full)
}

// textOf is the text form of a value of a type without a neutral kind
// (IPv4, Map, Tuple, …).
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// specialFloat spells NaN and infinities as PostgreSQL does; JSON has no
// numbers for them.
func specialFloat(f float64) (string, bool) {
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
