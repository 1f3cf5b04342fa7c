package ms

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
)

func TestGUIDString(t *testing.T) {
	// Microsoft's documented example: the GUID
	// 6F9619FF-8B86-D011-B42D-00C04FC964FF is stored and sent as these
	// bytes.
	wire := []byte{0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	const want = "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	if got := GUIDString(wire); got != want {
		t.Fatalf("GUIDString = %s, want %s", got, want)
	}
	// The driver's own type agrees on the byte order.
	var u mssql.UniqueIdentifier
	if err := u.Scan(wire); err != nil {
		t.Fatal(err)
	}
	if got := GUIDString(wire); got != lower(u.String()) {
		t.Fatalf("GUIDString = %s, driver says %s", got, u.String())
	}
	// And a value it encodes for the server comes back as it started.
	if err := u.Scan("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"); err != nil {
		t.Fatal(err)
	}
	v, err := u.Value()
	if err != nil {
		t.Fatal(err)
	}
	if got := GUIDString(v.([]byte)); got != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" {
		t.Fatalf("round trip gives %s", got)
	}
	// The decoders: wire order by default, canonical order under the DSN's
	// "guid conversion".
	_, dec := decoderFor("UNIQUEIDENTIFIER", false)
	if got, err := dec(wire); err != nil || got != want {
		t.Fatalf("decode wire order = %v, %v", got, err)
	}
	canon := []byte{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	_, dec = decoderFor("UNIQUEIDENTIFIER", true)
	if got, err := dec(canon); err != nil || got != want {
		t.Fatalf("decode canonical order = %v, %v", got, err)
	}
	if _, err := dec([]byte{1, 2, 3}); err == nil {
		t.Fatal("a short uniqueidentifier must be an error")
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// TestDecoders feeds each decoder what go-mssqldb scans for its type.
func TestDecoders(t *testing.T) {
	utc := time.UTC
	plus2 := time.FixedZone("", 2*3600)
	tests := []struct {
		typ  string
		in   any
		kind dialects.Kind
		want any
	}{
		{"BIT", true, dialects.KindBool, true},
		{"TINYINT", int64(255), dialects.KindInt, int64(255)},
		{"SMALLINT", int64(-32768), dialects.KindInt, int64(-32768)},
		{"INT", int64(2147483647), dialects.KindInt, int64(2147483647)},
		{"BIGINT", int64(-9223372036854775808), dialects.KindInt, int64(-9223372036854775808)},
		{"REAL", float64(float32(1.1)), dialects.KindFloat, 1.1},
		{"REAL", float64(float32(-3.4e38)), dialects.KindFloat, -3.4e38},
		{"FLOAT", 0.1, dialects.KindFloat, 0.1},
		{"DECIMAL", []byte("12345678901234567890.123456789012"), dialects.KindDecimal, json.Number("12345678901234567890.123456789012")},
		{"DECIMAL", []byte("-0.50"), dialects.KindDecimal, json.Number("-0.50")},
		{"MONEY", []byte("922337203685477.5807"), dialects.KindDecimal, json.Number("922337203685477.5807")},
		{"SMALLMONEY", []byte("-214748.3648"), dialects.KindDecimal, json.Number("-214748.3648")},
		{"NVARCHAR", `it's "quoted" ünïcødé ✓ 🎉`, dialects.KindString, `it's "quoted" ünïcødé ✓ 🎉`},
		{"VARCHAR", "x", dialects.KindString, "x"},
		{"NCHAR", "ab ", dialects.KindString, "ab "},
		{"CHAR", "ab ", dialects.KindString, "ab "},
		{"TEXT", "t", dialects.KindString, "t"},
		{"NTEXT", "t", dialects.KindString, "t"},
		{"XML", "<a/>", dialects.KindString, "<a/>"},
		{"DATE", time.Date(2024, 2, 29, 0, 0, 0, 0, utc), dialects.KindDate, "2024-02-29"},
		{"DATE", time.Date(1, 1, 1, 0, 0, 0, 0, utc), dialects.KindDate, "0001-01-01"},
		{"DATETIME2", time.Date(2024, 1, 2, 3, 4, 5, 123456700, utc), dialects.KindTimestamp, "2024-01-02T03:04:05.1234567"},
		{"DATETIME2", time.Date(9999, 12, 31, 23, 59, 59, 0, utc), dialects.KindTimestamp, "9999-12-31T23:59:59"},
		{"DATETIME", time.Date(2024, 1, 2, 3, 4, 5, 3333333, utc), dialects.KindTimestamp, "2024-01-02T03:04:05.003"},
		{"DATETIME", time.Date(2024, 1, 2, 3, 4, 5, 6666666, utc), dialects.KindTimestamp, "2024-01-02T03:04:05.007"},
		{"DATETIME", time.Date(2024, 1, 2, 3, 4, 5, 996666666, utc), dialects.KindTimestamp, "2024-01-02T03:04:05.997"},
		{"DATETIME", time.Date(2024, 1, 2, 3, 4, 5, 999999999, utc), dialects.KindTimestamp, "2024-01-02T03:04:06"},
		{"SMALLDATETIME", time.Date(2024, 1, 2, 3, 4, 0, 0, utc), dialects.KindTimestamp, "2024-01-02T03:04:00"},
		// The driver's "timezone" setting only labels the wall clock.
		{"DATETIME2", time.Date(2024, 1, 2, 3, 4, 5, 500000000, plus2), dialects.KindTimestamp, "2024-01-02T03:04:05.5"},
		{"DATETIMEOFFSET", time.Date(2024, 1, 2, 3, 4, 5, 500000000, plus2), dialects.KindTimestampTZ,
			time.Date(2024, 1, 2, 1, 4, 5, 500000000, utc)},
		{"TIME", time.Date(1, 1, 1, 13, 4, 5, 120000000, utc), dialects.KindTime, "13:04:05.12"},
		{"TIME", time.Date(1, 1, 1, 0, 0, 0, 0, utc), dialects.KindTime, "00:00:00"},
		{"VARBINARY", []byte{0, 0xff, 0x10}, dialects.KindBytes, []byte{0, 0xff, 0x10}},
		{"BINARY", []byte{1}, dialects.KindBytes, []byte{1}},
		{"IMAGE", []byte{2}, dialects.KindBytes, []byte{2}},
		{"GEOMETRY", []byte{3}, dialects.KindBytes, []byte{3}},
		{"HIERARCHYID", []byte{4}, dialects.KindBytes, []byte{4}},
		{"SQL_VARIANT", int64(7), dialects.KindOther, int64(7)},
		{"SQL_VARIANT", time.Date(2024, 1, 2, 3, 4, 5, 0, utc), dialects.KindOther, "2024-01-02T03:04:05"},
		{"SOMETHING_NEW", "text", dialects.KindOther, "text"},
	}
	for _, tt := range tests {
		kind, dec := decoderFor(tt.typ, false)
		if kind != tt.kind {
			t.Errorf("%s: kind %s, want %s", tt.typ, kind, tt.kind)
		}
		got, err := dec(tt.in)
		if err != nil {
			t.Errorf("%s %#v: %v", tt.typ, tt.in, err)
			continue
		}
		if tz, ok := tt.want.(time.Time); ok {
			g, ok := got.(time.Time)
			if !ok || !g.Equal(tz) || g.Location() != time.UTC {
				t.Errorf("%s: got %#v, want %v in UTC", tt.typ, got, tz)
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %#v: got %#v (%T), want %#v (%T)", tt.typ, tt.in, got, got, tt.want, tt.want)
		}
	}
	// A decoder handed the wrong Go type says so instead of guessing.
	for _, typ := range []string{"REAL", "DECIMAL", "DATE", "DATETIME2", "DATETIME", "DATETIMEOFFSET", "TIME", "UNIQUEIDENTIFIER"} {
		_, dec := decoderFor(typ, false)
		if _, err := dec(struct{}{}); err == nil {
			t.Errorf("%s: no error for a struct", typ)
		}
	}
}

// The JSON the faces write keeps every digit of decimals and big integers.
func TestDecodedJSON(t *testing.T) {
	_, dec := decoderFor("DECIMAL", false)
	d, _ := dec([]byte("12345678901234567890.123456789012"))
	_, idec := decoderFor("BIGINT", false)
	i, _ := idec(int64(9007199254740993))
	js, err := json.Marshal([]any{d, i})
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `[12345678901234567890.123456789012,9007199254740993]` {
		t.Fatalf("JSON %s", js)
	}
}

func TestKindOf(t *testing.T) {
	want := map[string]dialects.Kind{
		"bit": dialects.KindBool, "tinyint": dialects.KindInt, "smallint": dialects.KindInt, "int": dialects.KindInt,
		"bigint": dialects.KindInt, "decimal": dialects.KindDecimal, "numeric": dialects.KindDecimal,
		"money": dialects.KindDecimal, "smallmoney": dialects.KindDecimal, "real": dialects.KindFloat,
		"float": dialects.KindFloat, "char": dialects.KindString, "varchar": dialects.KindString,
		"text": dialects.KindString, "nchar": dialects.KindString, "nvarchar": dialects.KindString,
		"ntext": dialects.KindString, "xml": dialects.KindString, "sysname": dialects.KindString,
		"uniqueidentifier": dialects.KindUUID, "date": dialects.KindDate, "datetime": dialects.KindTimestamp,
		"datetime2": dialects.KindTimestamp, "smalldatetime": dialects.KindTimestamp,
		"datetimeoffset": dialects.KindTimestampTZ, "time": dialects.KindTime, "binary": dialects.KindBytes,
		"varbinary": dialects.KindBytes, "image": dialects.KindBytes, "timestamp": dialects.KindBytes,
		"geography": dialects.KindBytes, "json": dialects.KindString, "sql_variant": dialects.KindOther, "DateTime2": dialects.KindTimestamp,
	}
	for typ, k := range want {
		if got := kindOf(typ); got != k {
			t.Errorf("kindOf(%q) = %s, want %s", typ, got, k)
		}
	}
}

func TestDBType(t *testing.T) {
	tests := []struct {
		declared, base string
		maxLen, p, s   int
		want           string
	}{
		{"int", "int", 4, 10, 0, "int"},
		{"nvarchar", "nvarchar", 40, 0, 0, "nvarchar(20)"},
		{"nvarchar", "nvarchar", -1, 0, 0, "nvarchar(max)"},
		{"varchar", "varchar", 20, 0, 0, "varchar(20)"},
		{"varbinary", "varbinary", -1, 0, 0, "varbinary(max)"},
		{"binary", "binary", 16, 0, 0, "binary(16)"},
		{"nchar", "nchar", 6, 0, 0, "nchar(3)"},
		{"decimal", "decimal", 9, 10, 2, "decimal(10,2)"},
		{"numeric", "numeric", 17, 38, 0, "numeric(38,0)"},
		{"datetime2", "datetime2", 8, 27, 7, "datetime2(7)"},
		{"datetimeoffset", "datetimeoffset", 10, 34, 7, "datetimeoffset(7)"},
		{"time", "time", 5, 16, 7, "time(7)"},
		{"datetime", "datetime", 8, 23, 3, "datetime"},
		{"uniqueidentifier", "uniqueidentifier", 16, 0, 0, "uniqueidentifier"},
		{"ssn", "varchar", 11, 0, 0, "ssn"},          // alias type: its own name
		{"sysname", "sysname", 256, 0, 0, "sysname"}, // no base row: named as declared
		{"geometry", "geometry", -1, 0, 0, "geometry"},
	}
	for _, tt := range tests {
		if got := dbType(tt.declared, tt.base, tt.maxLen, tt.p, tt.s); got != tt.want {
			t.Errorf("dbType(%q, %q, %d, %d, %d) = %q, want %q", tt.declared, tt.base, tt.maxLen, tt.p, tt.s, got, tt.want)
		}
	}
}

func TestIntrospectedColumn(t *testing.T) {
	tests := []struct {
		row  introspected
		want dialects.Column
	}{
		{introspected{column: "id", declared: "bigint", base: "bigint", maxLen: 8, precision: 19, pk: true, identity: true},
			dialects.Column{Name: "id", DBType: "bigint", Kind: dialects.KindInt, PrimaryKey: true, HasDefault: true}},
		{introspected{column: "n", declared: "int", base: "int", maxLen: 4, nullable: true, hasDC: true, definition: "((7))"},
			dialects.Column{Name: "n", DBType: "int", Kind: dialects.KindInt, Nullable: true, HasDefault: true, Default: "((7))"}},
		{introspected{column: "g", declared: "int", base: "int", maxLen: 4, nullable: true, computed: true, definition: "([n]*(2))"},
			dialects.Column{Name: "g", DBType: "int", Kind: dialects.KindInt, Nullable: true, HasDefault: true, Default: "([n]*(2))"}},
		{introspected{column: "rv", declared: "timestamp", base: "timestamp", maxLen: 8},
			dialects.Column{Name: "rv", DBType: "timestamp", Kind: dialects.KindBytes, HasDefault: true}},
		{introspected{column: "code", declared: "ssn", base: "varchar", maxLen: 11, nullable: true},
			dialects.Column{Name: "code", DBType: "ssn", Kind: dialects.KindString, Nullable: true}},
	}
	for _, tt := range tests {
		if got := tt.row.toColumn(); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.row.column, got, tt.want)
		}
	}
}
