package pg

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func daysSince2000(y int, m time.Month, d int) int32 {
	return int32((time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() - 946684800) / 86400)
}

func TestBinaryDecoders(t *testing.T) {
	tests := []struct {
		name string
		dec  decodeFunc
		src  []byte
		want any
	}{
		{"bool", binBool, []byte{1}, true},
		{"int2", binInt2, []byte{0xff, 0xfe}, int64(-2)},
		{"int4", binInt4, be32(math.MinInt32), int64(math.MinInt32)},
		{"int8", binInt8, be64(math.MaxInt64), int64(math.MaxInt64)},
		{"float4 shortest", binFloat4, binary.BigEndian.AppendUint32(nil, math.Float32bits(1.1)), 1.1},
		{"float4 NaN", binFloat4, binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN()))), "NaN"},
		{"float8", binFloat8, binary.BigEndian.AppendUint64(nil, math.Float64bits(0.1)), 0.1},
		{"float8 -Inf", binFloat8, binary.BigEndian.AppendUint64(nil, math.Float64bits(math.Inf(-1))), "-Infinity"},
		{"uuid", binUUID, []byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11},
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"bytea", binBytea, []byte{0, 1, 2}, []byte{0, 1, 2}},
		{"date epoch", binDate, be32(0), "2000-01-01"},
		{"date before", binDate, be32(-1), "1999-12-31"},
		{"date leap", binDate, be32(daysSince2000(2024, 2, 29)), "2024-02-29"},
		{"date BC", binDate, be32(daysSince2000(-43, 3, 15)), "0044-03-15 BC"},
		{"date 5 digits", binDate, be32(daysSince2000(12345, 6, 7)), "12345-06-07"},
		{"date infinity", binDate, be32(math.MaxInt32), "infinity"},
		{"date -infinity", binDate, be32(math.MinInt32), "-infinity"},
		{"timestamp epoch", binTimestamp, be64(0), "2000-01-01T00:00:00"},
		{"timestamp fraction", binTimestamp, be64(1_500_000), "2000-01-01T00:00:01.5"},
		{"timestamp micro", binTimestamp, be64(-1), "1999-12-31T23:59:59.999999"},
		{"timestamp infinity", binTimestamp, be64(math.MaxInt64), "infinity"},
		{"timestamptz", binTimestamptz, be64(1_000_001), time.Date(2000, 1, 1, 0, 0, 1, 1000, time.UTC)},
		{"timestamptz -infinity", binTimestamptz, be64(math.MinInt64), "-infinity"},
		{"time midnight", binTime, be64(0), "00:00:00"},
		{"time fraction", binTime, be64((13*3600+4*60+5)*1e6 + 120000), "13:04:05.12"},
		{"time 24:00", binTime, be64(86400 * 1e6), "24:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dec(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	for name, dec := range map[string]decodeFunc{"bool": binBool, "int4": binInt4, "int8": binInt8, "uuid": binUUID,
		"date": binDate, "timestamp": binTimestamp, "array": binArray(binInt4)} {
		if _, err := dec([]byte{1, 2, 3}); err == nil {
			t.Errorf("%s accepted a malformed value", name)
		}
	}
}

func TestTextDecoders(t *testing.T) {
	tests := []struct {
		name string
		dec  decodeFunc
		src  string
		want any
	}{
		{"bool", textBool, "t", true},
		{"int", textInt, "-9223372036854775808", int64(math.MinInt64)},
		{"float", textFloat, "1.5e300", 1.5e300},
		{"float NaN", textFloat, "NaN", "NaN"},
		{"numeric", textNumeric, "12345678901234567890.123456789012", json.Number("12345678901234567890.123456789012")},
		{"numeric Infinity", textNumeric, "-Infinity", "-Infinity"},
		{"json", textJSON, `{"a": 1}`, json.RawMessage(`{"a": 1}`)},
		{"bytea hex", textBytea, `\x00ff`, []byte{0, 0xff}},
		{"bytea escape", textBytea, `a\\b\001`, []byte{'a', '\\', 'b', 1}},
		{"timestamp", textTimestamp, "2024-01-02 03:04:05.5", "2024-01-02T03:04:05.5"},
		{"timestamp BC", textTimestamp, "0044-03-15 12:00:00 BC", "0044-03-15T12:00:00 BC"},
		{"timestamp infinity", textTimestamp, "-infinity", "-infinity"},
		{"timestamptz", textTimestamptz, "2024-01-02 03:04:05.123456+01", time.Date(2024, 1, 2, 2, 4, 5, 123456000, time.UTC)},
		{"timestamptz half hour", textTimestamptz, "2024-01-02 03:04:05+05:30", time.Date(2024, 1, 1, 21, 34, 5, 0, time.UTC)},
		{"timestamptz seconds", textTimestamptz, "1900-01-01 00:00:00-00:09:21", time.Date(1900, 1, 1, 0, 9, 21, 0, time.UTC)},
		{"timestamptz infinity", textTimestamptz, "infinity", "infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dec([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestTextArray(t *testing.T) {
	tests := []struct {
		src   string
		elem  decodeFunc
		delim byte
		want  any
	}{
		{"{}", textInt, ',', []any{}},
		{"{1,2,NULL}", textInt, ',', []any{int64(1), int64(2), nil}},
		{`{"a b","c\"d",NULL,"NULL",null, e\,f ,""}`, textString, ',', []any{"a b", `c"d`, nil, "NULL", nil, "e,f", ""}},
		{"{{1,2},{3,4}}", textInt, ',', []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}},
		{"[0:1]={5,6}", textInt, ',', []any{int64(5), int64(6)}},
		{`{"{\"a\": 1}",null}`, textJSON, ',', []any{json.RawMessage(`{"a": 1}`), nil}},
		{"{1.50,NaN}", textNumeric, ',', []any{json.Number("1.50"), "NaN"}},
		{"{(1,1),(0,0);(2,2),(1,1)}", textString, ';', []any{"(1,1),(0,0)", "(2,2),(1,1)"}},
	}
	for _, tt := range tests {
		got, err := textArray(tt.elem, tt.delim)([]byte(tt.src))
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.src, got, tt.want)
		}
	}
	for _, bad := range []string{"", "{", "{1,2", "1,2}", "{1}x", `{"a}`, "{1,,2}"} {
		if _, err := textArray(textString, ',')([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestBinaryArray(t *testing.T) {
	m := pgtype.NewMap()
	one, three := int32(1), int32(3)
	tests := []struct {
		oid   uint32
		value any
		want  any
	}{
		{pgtype.Int4ArrayOID, []*int32{&one, nil, &three}, []any{int64(1), nil, int64(3)}},
		{pgtype.Int4ArrayOID, []int32{}, []any{}},
		{pgtype.Int8ArrayOID, [][]int64{{1, 2}, {3, 4}}, []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}},
		{pgtype.BoolArrayOID, []bool{true, false}, []any{true, false}},
	}
	for _, tt := range tests {
		src, err := m.Encode(tt.oid, pgtype.BinaryFormatCode, tt.value, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := codecs[tt.oid].bin(src)
		if err != nil {
			t.Errorf("%v: %v", tt.value, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: got %#v, want %#v", tt.value, got, tt.want)
		}
	}
}

// Every binary decoder must have a matching result format, and no text-only
// type may be asked for in binary.
func TestResultFormats(t *testing.T) {
	for oid, c := range codecs {
		if (c.bin != nil) != (resultFormats[oid] == pgtype.BinaryFormatCode) {
			t.Errorf("type %d (%s): binary decoder and result format disagree", oid, c.name)
		}
		if c.text == nil {
			t.Errorf("type %d (%s) has no text decoder", oid, c.name)
		}
	}
}

func TestBinaryFallback(t *testing.T) {
	m := pgtype.NewMap()
	src, err := m.Encode(pgtype.IntervalOID, pgtype.BinaryFormatCode,
		pgtype.Interval{Days: 1, Microseconds: 7384 * 1e6, Valid: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := binFallback(m, pgtype.IntervalOID)(src)
	if err != nil || got != "1 day 02:03:04" {
		t.Fatalf("got %#v, %v", got, err)
	}
	if _, err := binFallback(m, 999999)(src); err == nil {
		t.Fatal("unknown type decoded")
	}
}
