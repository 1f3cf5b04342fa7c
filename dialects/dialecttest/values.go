package dialecttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
)

// num is a number of the fixtures, bound as the engine binds it for a
// column of the given kind.
func num(k dialects.Kind, v float64) any {
	switch k {
	case dialects.KindInt:
		return int64(v)
	case dialects.KindDecimal:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return v
}

// sameCell reports whether a cell read back is the value want for a column
// of kind k, as dialects.Rows normalizes it. want is written as the engine
// hands values in (see the package documentation); the empty string means
// equal, anything else says how they differ.
func sameCell(k dialects.Kind, got, want any) string {
	if want == nil {
		if got != nil {
			return fmt.Sprintf("got %#v (%T), want NULL", got, got)
		}
		return ""
	}
	if got == nil {
		return fmt.Sprintf("got NULL, want %#v", want)
	}
	bad := func() string { return fmt.Sprintf("got %#v (%T), want %#v (%T)", got, got, want, want) }
	switch k {
	case dialects.KindInt:
		g, ok := got.(int64)
		if !ok || g != toInt64(want) {
			return bad() + " as int64"
		}
	case dialects.KindFloat:
		g, ok := floatOf(got)
		w, _ := floatOf(want)
		if !ok || g != w {
			return bad() + " as float64 (json.Number accepted)"
		}
	case dialects.KindDecimal:
		g, ok := got.(json.Number)
		if !ok || !sameDecimal(string(g), fmt.Sprint(want)) {
			return bad() + " as json.Number with every digit"
		}
	case dialects.KindBool:
		if g, ok := got.(bool); !ok || g != want.(bool) {
			return bad()
		}
	case dialects.KindString, dialects.KindDate, dialects.KindTimestamp:
		if g, ok := got.(string); !ok || g != want.(string) {
			return bad()
		}
	case dialects.KindUUID:
		if g, ok := got.(string); !ok || g != strings.ToLower(want.(string)) {
			return bad() + " as a lower-case string"
		}
	case dialects.KindTimestampTZ:
		g, ok := got.(time.Time)
		if !ok {
			return bad() + " as time.Time"
		}
		if w := want.(time.Time); !g.Equal(w) {
			return fmt.Sprintf("got %s, want %s (compared as instants, shown in UTC)",
				g.UTC().Format(time.RFC3339Nano), w.UTC().Format(time.RFC3339Nano))
		}
	case dialects.KindJSON:
		g, ok := got.(json.RawMessage)
		if !ok {
			return bad() + " as json.RawMessage"
		}
		if why := sameJSON(g, want.(json.RawMessage)); why != "" {
			return fmt.Sprintf("got %s, want %s: %s", g, want, why)
		}
	case dialects.KindBytes:
		g, ok := got.([]byte)
		if !ok || !bytes.Equal(g, want.([]byte)) {
			return bad()
		}
	case dialects.KindArray:
		g, ok := got.([]any)
		w := want.([]any)
		if !ok || len(g) != len(w) {
			return bad() + " as []any"
		}
		for i := range w {
			if why := sameCell(dialects.KindInt, intOf(g[i]), w[i]); why != "" {
				return fmt.Sprintf("element %d: %s", i, why)
			}
		}
	default:
		if !reflect.DeepEqual(got, want) {
			return bad()
		}
	}
	return ""
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// intOf accepts an array element read as int64 or as an integral
// json.Number (arrays decoded from JSON, like mi's).
func intOf(v any) any {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return v
}

func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// sameDecimal compares two decimal literals exactly: 1.50 and 1.5 are the
// same number, 0.1 and 0.1000000000000000055 are not.
func sameDecimal(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// sameJSON compares two JSON texts as values: key order and spacing do not
// matter, numbers are compared exactly (so a round trip through float64
// that loses digits is a difference).
func sameJSON(a, b []byte) string {
	va, err := decodeJSON(a)
	if err != nil {
		return "not JSON: " + err.Error()
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return "want is not JSON: " + err.Error()
	}
	return jsonDiff(va, vb, "$")
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonDiff(a, b any, path string) string {
	switch y := b.(type) {
	case json.Number:
		x, ok := a.(json.Number)
		if !ok || !sameDecimal(string(x), string(y)) {
			return fmt.Sprintf("%s: %v, want %v", path, a, b)
		}
		return ""
	case map[string]any:
		x, ok := a.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v, want %v", path, a, b)
		}
		for k, v := range y {
			if d := jsonDiff(x[k], v, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		x, ok := a.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v, want %v", path, a, b)
		}
		for i := range y {
			if d := jsonDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %v, want %v", path, a, b)
	}
	return ""
}

// cutFraction cuts the fraction of a "…hh:mm:ss.ffffff[zone]" timestamp to
// digits digits, for engines that keep fewer than microseconds.
func cutFraction(ts string, digits int) string {
	dot := strings.IndexByte(ts, '.')
	if dot < 0 {
		return ts
	}
	end := dot + 1
	for end < len(ts) && ts[end] >= '0' && ts[end] <= '9' {
		end++
	}
	keep := min(dot+1+digits, end)
	if digits == 0 {
		keep = dot
	}
	return ts[:keep] + ts[end:]
}

// trimFraction writes a zone-less timestamp as Rows gives it: the fraction
// without trailing zeros, no dot when nothing is left.
func trimFraction(ts string) string {
	if !strings.Contains(ts, ".") {
		return ts
	}
	ts = strings.TrimRight(ts, "0")
	return strings.TrimSuffix(ts, ".")
}
