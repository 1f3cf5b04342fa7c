package ma

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

func TestDecoders(t *testing.T) {
	tests := []struct {
		typ  string
		hint dialects.Kind
		src  string
		want any
		kind dialects.Kind
	}{
		{"TINYINT", dialects.KindOther, "-128", int64(-128), dialects.KindInt},
		{"TINYINT", dialects.KindBool, "1", true, dialects.KindBool},
		{"TINYINT", dialects.KindBool, "0", false, dialects.KindBool},
		{"TINYINT", dialects.KindBool, "-5", true, dialects.KindBool},
		{"UNSIGNED TINYINT", dialects.KindBool, "2", true, dialects.KindBool},
		{"BIGINT", dialects.KindInt, "-9223372036854775808", int64(-9223372036854775808), dialects.KindInt},
		{"UNSIGNED BIGINT", dialects.KindDecimal, "18446744073709551615", json.Number("18446744073709551615"), dialects.KindDecimal},
		{"UNSIGNED INT", dialects.KindInt, "4294967295", int64(4294967295), dialects.KindInt},
		{"YEAR", dialects.KindInt, "2155", int64(2155), dialects.KindInt},
		{"DECIMAL", dialects.KindDecimal, "-0.50", json.Number("-0.50"), dialects.KindDecimal},
		{"FLOAT", dialects.KindFloat, "1.1", 1.1, dialects.KindFloat},
		{"DOUBLE", dialects.KindFloat, "1.7976931348623157e308", 1.7976931348623157e308, dialects.KindFloat},
		{"BIT", dialects.KindInt, "\x01\x02", int64(258), dialects.KindInt},
		{"BIT", dialects.KindInt, "\xff\xff\xff\xff\xff\xff\xff\xff", json.Number("18446744073709551615"), dialects.KindInt},
		{"DATE", dialects.KindDate, "2024-02-29", "2024-02-29", dialects.KindDate},
		{"DATE", dialects.KindDate, "0000-00-00", "0000-00-00", dialects.KindDate},
		{"DATETIME", dialects.KindTimestamp, "2024-01-02 03:04:05.123400", "2024-01-02T03:04:05.1234", dialects.KindTimestamp},
		{"DATETIME", dialects.KindTimestamp, "2024-01-02 03:04:05.000000", "2024-01-02T03:04:05", dialects.KindTimestamp},
		{"DATETIME", dialects.KindTimestamp, "2024-01-02 03:04:05", "2024-01-02T03:04:05", dialects.KindTimestamp},
		{"TIMESTAMP", dialects.KindTimestampTZ, "2024-01-02 03:04:05.5", time.Date(2024, 1, 2, 3, 4, 5, 5e8, time.UTC), dialects.KindTimestampTZ},
		{"TIMESTAMP", dialects.KindTimestampTZ, "1970-01-01 00:00:01", time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), dialects.KindTimestampTZ},
		{"TIMESTAMP", dialects.KindTimestampTZ, "0000-00-00 00:00:00", "0000-00-00T00:00:00", dialects.KindTimestampTZ},
		{"TIME", dialects.KindTime, "-838:59:59.000000", "-838:59:59", dialects.KindTime},
		{"TIME", dialects.KindTime, "13:04:05.120000", "13:04:05.12", dialects.KindTime},
		{"JSON", dialects.KindJSON, `{"a": 1}`, json.RawMessage(`{"a": 1}`), dialects.KindJSON},
		{"LONGTEXT", dialects.KindJSON, `[1.50]`, json.RawMessage(`[1.50]`), dialects.KindJSON},
		{"LONGTEXT", dialects.KindString, "x", "x", dialects.KindString},
		{"VARCHAR", dialects.KindBool, "x", "x", dialects.KindString}, // stale hint: the protocol wins
		{"CHAR", dialects.KindUUID, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", dialects.KindUUID},
		{"BINARY", dialects.KindUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", dialects.KindUUID},
		{"ENUM", dialects.KindString, "happy", "happy", dialects.KindString},
		{"VARBINARY", dialects.KindBytes, "\x00\xff", []byte{0, 0xff}, dialects.KindBytes},
		{"BLOB", dialects.KindBytes, "", []byte{}, dialects.KindBytes},
		{"GEOMETRY", dialects.KindBytes, "\x01", []byte{1}, dialects.KindBytes},
		{"INET6", dialects.KindOther, "::1", "::1", dialects.KindOther},
	}
	for _, tt := range tests {
		dec, kind := pickDecoder(tt.typ, tt.hint)
		if kind != tt.kind {
			t.Errorf("%s (%s): kind %s, want %s", tt.typ, tt.hint, kind, tt.kind)
		}
		src := []byte(tt.src)
		got, err := dec(src)
		if err != nil {
			t.Errorf("%s %q: %v", tt.typ, tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q: got %#v, want %#v", tt.typ, tt.src, got, tt.want)
		}
		// Values must not alias the driver's buffer.
		for i := range src {
			src[i] = '#'
		}
		if len(src) > 0 && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q: value changed with the source buffer", tt.typ, tt.src)
		}
	}
	for _, bad := range []struct{ typ, src string }{
		{"INT", "x"}, {"DOUBLE", "x"}, {"TIMESTAMP", "2024-13-01 00:00:00"}, {"TIMESTAMP", "yesterday"},
		{"BIT", "123456789"}, {"TINYINT", "x"},
	} {
		dec, _ := pickDecoder(bad.typ, dialects.KindBool)
		if v, err := dec([]byte(bad.src)); err == nil {
			t.Errorf("%s %q decoded as %#v", bad.typ, bad.src, v)
		}
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		dataType, columnType string
		want                 dialects.Kind
	}{
		{"tinyint", "tinyint(1)", dialects.KindBool},
		{"tinyint", "tinyint(1) unsigned", dialects.KindBool},
		{"tinyint", "tinyint(4)", dialects.KindInt},
		{"tinyint", "tinyint", dialects.KindInt},
		{"bigint", "bigint(20) unsigned", dialects.KindDecimal},
		{"bigint", "bigint", dialects.KindInt},
		{"int", "int(10) unsigned", dialects.KindInt},
		{"bit", "bit(1)", dialects.KindInt},
		{"decimal", "decimal(10,2)", dialects.KindDecimal},
		{"double", "double", dialects.KindFloat},
		{"enum", "enum('a')", dialects.KindString},
		{"longtext", "longtext", dialects.KindString},
		{"json", "json", dialects.KindJSON},
		{"date", "date", dialects.KindDate},
		{"datetime", "datetime(6)", dialects.KindTimestamp},
		{"timestamp", "timestamp", dialects.KindTimestampTZ},
		{"time", "time", dialects.KindTime},
		{"varbinary", "varbinary(3)", dialects.KindBytes},
		{"point", "point", dialects.KindBytes},
		{"uuid", "uuid", dialects.KindUUID},
		{"inet6", "inet6", dialects.KindOther},
	}
	for _, tt := range tests {
		if got := kindOf(tt.dataType, tt.columnType); got != tt.want {
			t.Errorf("kindOf(%q, %q) = %s, want %s", tt.dataType, tt.columnType, got, tt.want)
		}
	}
}

func TestJSONValidColumn(t *testing.T) {
	tests := []struct {
		clause string
		col    string
		ok     bool
	}{
		{"json_valid(`j`)", "j", true},
		{"json_valid(`a``b`)", "a`b", true},
		{"json_valid(`a`) and json_valid(`b`)", "", false},
		{"`j` > 0", "", false},
		{"json_valid(``)", "", false},
	}
	for _, tt := range tests {
		col, ok := jsonValidColumn(tt.clause)
		if col != tt.col || ok != tt.ok {
			t.Errorf("jsonValidColumn(%q) = %q, %v; want %q, %v", tt.clause, col, ok, tt.col, tt.ok)
		}
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		version            string
		mariaDB, returning bool
	}{
		{"10.11.19-MariaDB-0+deb12u1", true, true},
		{"10.5.0-MariaDB", true, true},
		{"10.4.32-MariaDB-log", true, false},
		{"5.5.5-10.6.12-MariaDB", true, true},
		{"11.4.2-MariaDB", true, true},
		{"10.6-MariaDB", true, true},
		{"8.0.36", false, false},
		{"8.4.0-commercial", false, false},
	}
	for _, tt := range tests {
		info := parseServer(tt.version, "1")
		if info.mariaDB != tt.mariaDB || info.returning != tt.returning {
			t.Errorf("%s: mariaDB %v returning %v", tt.version, info.mariaDB, info.returning)
		}
	}
	if parseServer("8.0.36", "2").autoincStep != 2 || parseServer("8.0.36", "x").autoincStep != 1 {
		t.Error("auto_increment_increment not read")
	}
}

func TestSessionSQL(t *testing.T) {
	base := "SET SESSION time_zone = '+00:00', sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')"
	tests := []struct {
		info    serverInfo
		timeout time.Duration
		want    string
	}{
		{serverInfo{mariaDB: true}, 0, base},
		{serverInfo{mariaDB: true}, 300 * time.Millisecond, base + ", max_statement_time = 0.300000"},
		{serverInfo{mariaDB: true}, time.Nanosecond, base + ", max_statement_time = 0.000001"},
		{serverInfo{}, 1500 * time.Millisecond, base + ", max_execution_time = 1500"},
		{serverInfo{}, time.Microsecond, base + ", max_execution_time = 1"},
	}
	for _, tt := range tests {
		if got := sessionSQL(&tt.info, tt.timeout); got != tt.want {
			t.Errorf("sessionSQL(%+v, %v) =\n %s\nwant\n %s", tt.info, tt.timeout, got, tt.want)
		}
	}
}

func TestAdapt(t *testing.T) {
	meta := &tableMeta{hasTimestamps: true, kinds: map[string]dialects.Kind{
		"tz": dialects.KindTimestampTZ, "ts": dialects.KindTimestamp, "s": dialects.KindString}}
	zoned := "2024-02-29T23:59:59.123456+02:00"
	p := &query.Plan{
		Action:  query.Insert,
		Columns: []string{"tz", "ts", "s"},
		Rows:    [][]any{{zoned, zoned, zoned}, {"2024-01-01 00:00:00", nil, query.Default{}}},
		Where: query.And{query.Not{X: &query.Cond{Column: "tz", Op: query.Between, Args: []any{"2000-01-01T00:00:00Z", "2000-01-01"}}},
			query.Or{&query.Cond{Column: "s", Op: query.Eq, Args: []any{zoned}}}},
		Set: []query.Assign{{Column: "ts", Value: "2000-01-01 10:00:00-0800"}, {Column: "s", Value: zoned}},
	}
	got := adapt(p, meta)
	if got == p {
		t.Fatal("nothing adapted")
	}
	wantRows := [][]any{{"2024-02-29 21:59:59.123456", "2024-02-29 23:59:59.123456", zoned}, {"2024-01-01 00:00:00", nil, query.Default{}}}
	if !reflect.DeepEqual(got.Rows, wantRows) {
		t.Errorf("rows %v, want %v", got.Rows, wantRows)
	}
	if p.Rows[0][0] != zoned || p.Set[0].Value != "2000-01-01 10:00:00-0800" {
		t.Error("the caller's plan was changed")
	}
	between := got.Where.(query.And)[0].(query.Not).X.(*query.Cond)
	if !reflect.DeepEqual(between.Args, []any{"2000-01-01 00:00:00", "2000-01-01"}) {
		t.Errorf("where args %v", between.Args)
	}
	if s := got.Where.(query.And)[1].(query.Or)[0].(*query.Cond); s.Args[0] != zoned {
		t.Errorf("a string column was adapted: %v", s.Args)
	}
	if got.Set[0].Value != "2000-01-01 10:00:00" || got.Set[1].Value != zoned {
		t.Errorf("set %v", got.Set)
	}
	plain := &query.Plan{Action: query.Read, Where: &query.Cond{Column: "tz", Op: query.Eq, Args: []any{"2024-01-01 00:00:00"}}}
	if adapt(plain, meta) != plain {
		t.Error("a plan with nothing to adapt was copied")
	}
	if adapt(p, &tableMeta{kinds: meta.kinds}) != p {
		t.Error("a table without timestamps was adapted")
	}
}

func TestKeyString(t *testing.T) {
	same := [][2][]any{
		{{int64(5)}, {json.Number("5")}},
		{{"5"}, {int64(5)}},
		{{true}, {int64(1)}},
		{{[]byte("ab"), int64(1)}, {"ab", int64(1)}},
	}
	for _, s := range same {
		if keyString(s[0]) != keyString(s[1]) {
			t.Errorf("%v and %v differ", s[0], s[1])
		}
	}
	if keyString([]any{"a", "b"}) == keyString([]any{"a\x00b"}) || keyString([]any{int64(1), int64(23)}) == keyString([]any{int64(12), int64(3)}) {
		t.Error("keys collide")
	}
}
