package ch

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// use tells where a bound value goes: compared in a filter, or stored by
// an insert or update.
type use uint8

const (
	inFilter use = iota
	inWrite
)

// bound is a value ready for the driver and the SQL written around its
// placeholder.
type bound struct {
	arg       any
	pre, post string
}

// bindValue prepares a value for a column of type t. ClickHouse converts
// almost nothing implicitly and silently wraps integers that overflow on a
// cast, so values are checked and normalized here, against the column's
// type, and typed in SQL where a bare literal would not compare or store:
//
//   - integers up to Int64/UInt32 are bound as int64 and range checked
//     before they are stored;
//   - UInt64 and wider integers and decimals travel as their exact decimal
//     text inside CAST(? AS T), range checked;
//   - DateTime values are parsed here (RFC 3339, "2006-01-02 15:04:05",
//     a date alone; no offset means UTC) and bound as UTC text inside
//     toDateTime(?, 'UTC') or toDateTime64(?, p, 'UTC'); DateTime keeps
//     whole seconds;
//   - dates must be "2006-01-02";
//   - a stored value is always an expression of exactly the column's type
//     (CAST(? AS T), or toUUID(?) where old servers cannot CAST to
//     Nullable(UUID)), so every row of a multi-row insert has the same type
//     and a mutation has nothing left to convert.
//
// The driver formats and escapes the bound value itself.
func bindValue(column string, t *colType, v any, u use) (bound, error) {
	arg, err := coerce(column, t, v, u)
	if err != nil {
		return bound{}, err
	}
	b := bound{arg: arg}
	if u == inFilter {
		if arg == nil {
			return b, nil
		}
		switch t.name {
		case "DateTime":
			b.pre, b.post = "toDateTime(", ", 'UTC')"
		case "DateTime64":
			b.pre, b.post = "toDateTime64(", ", "+strconv.Itoa(t.scale)+", 'UTC')"
		case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256",
			"UInt64", "Int128", "UInt128", "Int256", "UInt256", "FixedString":
			b.pre, b.post = "CAST(", " AS "+t.base+")"
		}
		return b, nil
	}
	cast := " AS " + t.castType() + ")"
	switch {
	case arg == nil:
		b.pre, b.post = "CAST(", cast
	case t.name == "UUID":
		b.pre, b.post = "toUUID(", ")"
		if t.nullable {
			b.pre, b.post = "toNullable("+b.pre, b.post+")"
		}
	case t.name == "DateTime":
		b.pre, b.post = "CAST(toDateTime(", ", 'UTC')"+cast
	case t.name == "DateTime64":
		b.pre, b.post = "CAST(toDateTime64(", ", "+strconv.Itoa(t.scale)+", 'UTC')"+cast
	default:
		b.pre, b.post = "CAST(", cast
	}
	return b, nil
}

// coerce checks v against t and returns the value to bind.
func coerce(column string, t *colType, v any, u use) (any, error) {
	bad := func(format string, args ...any) error {
		return fault.New(fault.Invalid, "column %q: "+format, append([]any{column}, args...)...)
	}
	if v == nil {
		if u == inWrite && !t.nullable {
			return nil, bad("null is not allowed, the column's type is %s", t.full)
		}
		return nil, nil
	}
	switch t.name {
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32":
		n, ok := asInt64(v)
		if !ok {
			return nil, bad("%v is not an integer", v)
		}
		if u == inWrite {
			lo, hi := intRange(t.name)
			if n < lo || n > hi {
				return nil, bad("%d is out of range for %s", n, t.base)
			}
		}
		return n, nil
	case "UInt64", "Int128", "UInt128", "Int256", "UInt256":
		n, ok := asBigInt(v)
		if !ok {
			return nil, bad("%v is not an integer", v)
		}
		lo, hi := wideRange(t.name)
		if n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
			return nil, bad("%s is out of range for %s", n, t.base)
		}
		return n.String(), nil
	case "Float32", "Float64":
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		}
		f, err := strconv.ParseFloat(textValue(v), 64)
		if err != nil {
			return nil, bad("%v is not a number", v)
		}
		return f, nil
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		s := textValue(v)
		if f, ok := v.(float64); ok {
			s = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if !isDecimal(s) {
			return nil, bad("%v is not a decimal number", v)
		}
		return s, nil
	case "Bool":
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		case string:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, nil
			}
		}
		return nil, bad("%v is not true or false", v)
	case "FixedString":
		s := textValue(v)
		if t.size > 0 && len(s) > t.size {
			return nil, bad("%d bytes do not fit %s", len(s), t.base)
		}
		return s, nil
	case "String", "Enum8", "Enum16":
		return textValue(v), nil
	case "UUID":
		return strings.ToLower(textValue(v)), nil
	case "Date", "Date32":
		var d time.Time
		switch x := v.(type) {
		case time.Time:
			d = x.UTC()
		default:
			var err error
			if d, err = time.Parse(time.DateOnly, textValue(v)); err != nil {
				return nil, bad("%q is not a date (2006-01-02)", textValue(v))
			}
		}
		lo, hi := dateRange(t.name)
		if d.Before(lo) || d.After(hi) {
			return nil, bad("%s is out of range for %s", d.Format(time.DateOnly), t.base)
		}
		return d.Format(time.DateOnly), nil
	case "DateTime", "DateTime64":
		ts, err := asTime(v)
		if err != nil {
			return nil, bad("%q is not a timestamp", textValue(v))
		}
		lo, hi := timeRange(t.name)
		if ts.Before(lo) || ts.After(hi) {
			return nil, bad("%s is out of range for %s", ts.Format(time.RFC3339Nano), t.base)
		}
		if t.name == "DateTime" {
			return ts.Format(time.DateTime), nil
		}
		layout := time.DateTime
		if t.scale > 0 {
			layout += "." + strings.Repeat("0", min(t.scale, 9))
		}
		return ts.Format(layout), nil
	case "Array":
		a, ok := v.([]any)
		if !ok || t.elem == nil {
			return nil, bad("expected an array")
		}
		out := make([]any, len(a))
		for i, e := range a {
			// Elements are inside an array literal: no SQL can be put
			// around them, the array's CAST converts them.
			x, err := coerce(column, t.elem, e, inWrite)
			if err != nil {
				return nil, err
			}
			if t.elem.name == "DateTime" && x != nil {
				// As Unix seconds, which a cast reads independent of the
				// column's time zone (text would be read in that zone).
				ts, _ := asTime(e)
				x = ts.Unix()
			}
			out[i] = x
		}
		return out, nil
	}
	switch x := v.(type) {
	case json.RawMessage:
		return string(x), nil
	case []byte:
		return string(x), nil
	}
	return v, nil
}

// textValue is the text a request value was sent as.
func textValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case json.RawMessage:
		return string(x)
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return textOf(v)
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), true
		}
		return 0, false
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	n, err := strconv.ParseInt(textValue(v), 10, 64)
	return n, err == nil
}

func asBigInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int64:
		return big.NewInt(x), true
	case int:
		return big.NewInt(int64(x)), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	case *big.Int:
		if x == nil {
			return nil, false
		}
		return x, true
	}
	n, ok := new(big.Int).SetString(textValue(v), 10)
	return n, ok
}

func intRange(name string) (int64, int64) {
	switch name {
	case "Int8":
		return math.MinInt8, math.MaxInt8
	case "Int16":
		return math.MinInt16, math.MaxInt16
	case "Int32":
		return math.MinInt32, math.MaxInt32
	case "UInt8":
		return 0, math.MaxUint8
	case "UInt16":
		return 0, math.MaxUint16
	case "UInt32":
		return 0, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}

var (
	one     = big.NewInt(1)
	zero    = big.NewInt(0)
	pow2    = func(n uint) *big.Int { return new(big.Int).Lsh(one, n) }
	minus   = func(x *big.Int) *big.Int { return new(big.Int).Neg(x) }
	less1   = func(x *big.Int) *big.Int { return new(big.Int).Sub(x, one) }
	wideMin = map[string]*big.Int{"UInt64": zero, "UInt128": zero, "UInt256": zero,
		"Int128": minus(pow2(127)), "Int256": minus(pow2(255))}
	wideMax = map[string]*big.Int{"UInt64": less1(pow2(64)), "UInt128": less1(pow2(128)), "UInt256": less1(pow2(256)),
		"Int128": less1(pow2(127)), "Int256": less1(pow2(255))}
)

func wideRange(name string) (*big.Int, *big.Int) { return wideMin[name], wideMax[name] }

// lastYear is the last year Date and DateTime values are accepted in. The
// types could hold dates up to 2149 and 2106, but 18.x servers compute
// dates in a table that ends with 2105 and turn later ones into 1970 or
// 0000-00-00 without a word.
const lastYear = 2105

// dateRange is what Date (days since 1970) and Date32 hold.
func dateRange(name string) (time.Time, time.Time) {
	if name == "Date32" {
		return time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2299, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	return time.Unix(0, 0).UTC(), time.Date(lastYear, 12, 31, 0, 0, 0, 0, time.UTC)
}

// timeRange is what DateTime (seconds since 1970) and DateTime64 hold.
func timeRange(name string) (time.Time, time.Time) {
	if name == "DateTime64" {
		return time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2299, 12, 31, 23, 59, 59, 999999999, time.UTC)
	}
	return time.Unix(0, 0).UTC(), time.Date(lastYear, 12, 31, 23, 59, 59, 999999999, time.UTC)
}

// timeLayouts are the timestamp spellings accepted from requests: RFC 3339
// (what the gateway itself answers), ISO with a space, short offsets as
// PostgreSQL prints them, no offset (UTC), and a date alone.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	time.DateOnly,
}

func asTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), nil
	}
	s := strings.TrimSpace(textValue(v))
	var err error
	for _, layout := range timeLayouts {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, err
}

// isDecimal accepts a plain decimal literal: what strconv.ParseFloat reads,
// without infinities, NaN or hexadecimal.
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return false
		}
	}
	l := strings.ToLower(s)
	return !strings.Contains(l, "inf") && !strings.Contains(l, "nan") && !strings.Contains(l, "x") && !strings.Contains(l, "_")
}
