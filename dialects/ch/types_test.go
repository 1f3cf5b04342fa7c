package ch

import (
	"encoding/json"
	"math"
	"math/big"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/littlebitlabs/minimal/dialects"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in       string
		name     string
		base     string
		cast     string
		nullable bool
		kind     dialects.Kind
		scale    int
		size     int
		args     int
	}{
		{"Int64", "Int64", "Int64", "Int64", false, dialects.KindInt, 0, 0, 0},
		{"UInt8", "UInt8", "UInt8", "UInt8", false, dialects.KindInt, 0, 0, 0},
		{"UInt64", "UInt64", "UInt64", "UInt64", false, dialects.KindDecimal, 0, 0, 0},
		{"Int256", "Int256", "Int256", "Int256", false, dialects.KindDecimal, 0, 0, 0},
		{"Nullable(Float32)", "Float32", "Float32", "Nullable(Float32)", true, dialects.KindFloat, 0, 0, 0},
		{"Decimal(18, 4)", "Decimal", "Decimal(18, 4)", "Decimal(18, 4)", false, dialects.KindDecimal, 4, 0, 2},
		{"Nullable(Decimal64(3))", "Decimal64", "Decimal64(3)", "Nullable(Decimal64(3))", true, dialects.KindDecimal, 3, 0, 1},
		{"Bool", "Bool", "Bool", "Bool", false, dialects.KindBool, 0, 0, 0},
		{"LowCardinality(String)", "String", "String", "String", false, dialects.KindString, 0, 0, 0},
		{"LowCardinality(Nullable(String))", "String", "String", "Nullable(String)", true, dialects.KindString, 0, 0, 0},
		{"FixedString(16)", "FixedString", "FixedString(16)", "FixedString(16)", false, dialects.KindString, 0, 16, 1},
		{"Enum8('a, b' = 1, 'it\\'s (x)' = 2)", "Enum8", "Enum8('a, b' = 1, 'it\\'s (x)' = 2)", "Enum8('a, b' = 1, 'it\\'s (x)' = 2)", false, dialects.KindString, 0, 0, 2},
		{"UUID", "UUID", "UUID", "UUID", false, dialects.KindUUID, 0, 0, 0},
		{"Date", "Date", "Date", "Date", false, dialects.KindDate, 0, 0, 0},
		{"Date32", "Date32", "Date32", "Date32", false, dialects.KindDate, 0, 0, 0},
		{"DateTime", "DateTime", "DateTime", "DateTime", false, dialects.KindTimestampTZ, 0, 0, 0},
		{"Nullable(DateTime('Europe/Berlin'))", "DateTime", "DateTime('Europe/Berlin')", "Nullable(DateTime('Europe/Berlin'))", true, dialects.KindTimestampTZ, 0, 0, 1},
		{"DateTime64(3, 'UTC')", "DateTime64", "DateTime64(3, 'UTC')", "DateTime64(3, 'UTC')", false, dialects.KindTimestampTZ, 3, 0, 2},
		{"Array(Nullable(Int32))", "Array", "Array(Nullable(Int32))", "Array(Nullable(Int32))", false, dialects.KindArray, 0, 0, 1},
		{"Map(String, UInt64)", "Map", "Map(String, UInt64)", "Map(String, UInt64)", false, dialects.KindOther, 0, 0, 2},
		{"Tuple(a Int32, b String)", "Tuple", "Tuple(a Int32, b String)", "Tuple(a Int32, b String)", false, dialects.KindOther, 0, 0, 2},
		{"IPv4", "IPv4", "IPv4", "IPv4", false, dialects.KindOther, 0, 0, 0},
		{"Nothing", "Nothing", "Nothing", "Nothing", false, dialects.KindOther, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := parseType(tt.in)
			if c.full != tt.in || c.name != tt.name || c.base != tt.base || c.castType() != tt.cast ||
				c.nullable != tt.nullable || c.kind != tt.kind || c.scale != tt.scale || c.size != tt.size || len(c.args) != tt.args {
				t.Errorf("got %+v (cast %s)", *c, c.castType())
			}
		})
	}
	arr := parseType("Array(Nullable(Decimal(9, 2)))")
	if arr.elem == nil || arr.elem.name != "Decimal" || !arr.elem.nullable || arr.elem.scale != 2 {
		t.Errorf("array element %+v", arr.elem)
	}
}

func TestNormalize(t *testing.T) {
	p := func(v any) any {
		rv := reflect.New(reflect.TypeOf(v))
		rv.Elem().Set(reflect.ValueOf(v))
		return rv.Interface()
	}
	var nilInt *int64
	berlin, _ := time.LoadLocation("Europe/Berlin")
	u := uuid.MustParse("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11")
	big128, _ := new(big.Int).SetString("-170141183460469231731687303715884105728", 10)
	tests := []struct {
		typ  string
		in   any
		want any
	}{
		{"Int8", int8(-128), int64(-128)},
		{"Int64", int64(math.MinInt64), int64(math.MinInt64)},
		{"UInt32", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"UInt64", uint64(math.MaxUint64), json.Number("18446744073709551615")},
		{"Int128", *big128, json.Number("-170141183460469231731687303715884105728")},
		{"Int128", big128, json.Number("-170141183460469231731687303715884105728")},
		{"Float32", float32(1.1), 1.1},
		{"Float32", float32(math.Inf(-1)), "-Infinity"},
		{"Float64", math.NaN(), "NaN"},
		{"Float64", 0.1, 0.1},
		{"Decimal(20, 6)", decimal.RequireFromString("-1.5"), json.Number("-1.500000")},
		{"Decimal(38, 0)", decimal.RequireFromString("99999999999999999999999999999999999999"), json.Number("99999999999999999999999999999999999999")},
		{"Bool", true, true},
		{"String", "it's ✓", "it's ✓"},
		{"Enum8('a' = 1)", "a", "a"},
		{"FixedString(4)", "ab\x00\x00", "ab"},
		{"UUID", u, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"Date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "2024-02-29"},
		{"DateTime('Europe/Berlin')", time.Date(2024, 2, 29, 23, 59, 59, 0, berlin), time.Date(2024, 2, 29, 22, 59, 59, 0, time.UTC)},
		{"Nullable(Int32)", p(int32(5)), int64(5)},
		{"Nullable(Int32)", nilInt, nil},
		{"Nullable(String)", nil, nil},
		{"Array(Nullable(Int32))", []*int32{p(int32(1)).(*int32), nil}, []any{int64(1), nil}},
		{"Array(Decimal(9, 2))", []decimal.Decimal{decimal.RequireFromString("1.5")}, []any{json.Number("1.50")}},
		{"Array(Array(String))", [][]string{{"a"}, {}}, []any{[]any{"a"}, []any{}}},
		{"IPv4", net.IPv4(10, 0, 0, 1), "10.0.0.1"},
		{"Map(String, UInt64)", map[string]uint64{"a": 1}, `{"a":1}`},
	}
	for _, tt := range tests {
		got, err := normalize(parseType(tt.typ), tt.in)
		if err != nil {
			t.Errorf("%s %#v: %v", tt.typ, tt.in, err)
			continue
		}
		if g, ok := got.(time.Time); ok {
			if w, _ := tt.want.(time.Time); !g.Equal(w) || g.Location() != time.UTC {
				t.Errorf("%s: got %v, want %v in UTC", tt.typ, g, w)
			}
			continue
		}
		if f, ok := tt.want.(float64); ok && math.IsNaN(f) {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %#v: got %#v (%T), want %#v (%T)", tt.typ, tt.in, got, got, tt.want, tt.want)
		}
	}
	if _, err := normalize(parseType("Int32"), "x"); err == nil {
		t.Error("a string for an Int32 column normalized")
	}
}

func TestCoerce(t *testing.T) {
	tests := []struct {
		typ  string
		in   any
		use  use
		want any
	}{
		{"Int32", "42", inFilter, int64(42)},
		{"Int32", json.Number("-7"), inWrite, int64(-7)},
		{"Int32", 3.0, inWrite, int64(3)},
		{"UInt64", json.Number("18446744073709551615"), inWrite, "18446744073709551615"},
		{"Float64", json.Number("0.1"), inWrite, 0.1},
		{"Float64", "Infinity", inWrite, math.Inf(1)},
		{"Decimal(9, 2)", 1.25, inWrite, "1.25"},
		{"Decimal(9, 2)", json.Number("-0.5"), inFilter, "-0.5"},
		{"Bool", "true", inFilter, true},
		{"Bool", int64(0), inWrite, false},
		{"String", json.RawMessage(`{"a":1}`), inWrite, `{"a":1}`},
		{"UUID", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", inFilter, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"Date", time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC), inWrite, "2024-02-29"},
		{"DateTime", "2000-06-15 12:30:45", inFilter, "2000-06-15 12:30:45"},
		{"DateTime", "2000-06-15T12:30:45.9-01:00", inFilter, "2000-06-15 13:30:45"},
		{"DateTime", "1999-12-31T23:59:59-08", inFilter, "2000-01-01 07:59:59"},
		{"DateTime", "2024-02-29", inFilter, "2024-02-29 00:00:00"},
		{"DateTime64(3)", "2024-02-29T23:59:59.123456Z", inWrite, "2024-02-29 23:59:59.123"},
		{"DateTime64(0)", "2024-02-29T23:59:59.5Z", inWrite, "2024-02-29 23:59:59"},
		{"Array(DateTime)", []any{"1970-01-01T00:01:00Z", nil}, inWrite, nil}, // NULL element in a non-nullable array: refused below
		{"Array(Nullable(DateTime))", []any{"1970-01-01T00:01:00Z", nil}, inWrite, []any{int64(60), nil}},
		{"Map(String, UInt64)", "{}", inWrite, "{}"},
	}
	for _, tt := range tests {
		got, err := coerce("c", parseType(tt.typ), tt.in, tt.use)
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s %#v: got %#v, want an error", tt.typ, tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %#v: %v", tt.typ, tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %#v: got %#v (%T), want %#v (%T)", tt.typ, tt.in, got, got, tt.want, tt.want)
		}
	}
}
