package dialecttest

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// typeRows are the rows of the round trip, by name, each column's value as
// the engine hands it to the dialect. "nulls" is NULL everywhere.
var typeRows = []struct {
	name string
	vals map[string]any
}{
	{"max", map[string]any{
		"i64": int64(math.MaxInt64),
		"dec": "99999999999999.999999",
		"f64": math.MaxFloat64,
		"b":   true,
		"s":   "it's \"quoted\" \\back\\slash\ttab\nline\r; -- ünïcødé ✓ 🎉 日本語 ",
		"d":   "2024-02-29",
		"ts":  "2024-02-29T23:59:59.123456",
		"tz":  "2024-02-29T23:59:59.123456+02:00",
		"j":   json.RawMessage(`{"a":[1,2.5,"x"],"b":null,"c":{"d":true,"e":"ünï ✓"},"big":12345678901234567890,"exact":9007199254740993}`),
		"u":   "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"by":  []byte{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, '\'', '"', '\\'},
		"arr": []any{int64(1), int64(-2), int64(math.MaxInt64)},
	}},
	{"min", map[string]any{
		"i64": int64(math.MinInt64),
		"dec": "-99999999999999.999999",
		"f64": -2.5e-300,
		"b":   false,
		"s":   "",
		"d":   "1999-12-31",
		"ts":  "1999-12-31T00:00:00",
		"tz":  "1999-12-31T23:59:59-08:00",
		"j":   json.RawMessage(`{}`),
		"u":   "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
		"by":  []byte{},
		"arr": []any{},
	}},
	{"mid", map[string]any{
		"i64": int64(0),
		"dec": "12345678901234.123456",
		"f64": 0.1,
		"b":   true,
		"s":   "'; DROP TABLE conf_types; --",
		"d":   "2000-01-01",
		"ts":  "2000-06-15T12:30:45.5",
		"tz":  "2000-06-15T12:30:45.5Z",
		"j":   json.RawMessage(`{"n":-0.000001,"s":"\"q\" \\ \u0001"}`),
		"u":   "00000000-0000-0000-0000-000000000000",
		"by":  []byte("plain"),
		"arr": []any{int64(0)},
	}},
	{"nulls", map[string]any{}},
}

// typeColumns are the conf_types columns this engine has.
func (s *suite) typeColumns() []typeCol {
	var out []typeCol
	for _, c := range typeCols {
		if c.lack(&s.h.Lacks) == "" {
			out = append(out, c)
		}
	}
	return out
}

// input is a round-trip value as sent: timestamps cut to the digits the
// engine keeps, so that the value read back is exactly determined.
func (s *suite) input(col string, v any) any {
	if str, ok := v.(string); ok && (col == "ts" || col == "tz") {
		return cutFraction(str, s.h.timeDigits())
	}
	return v
}

// expected is the value a round trip must give back for an input.
func (s *suite) expected(col string, v any) any {
	if v == nil {
		return nil
	}
	v = s.input(col, v)
	switch col {
	case "ts":
		return trimFraction(v.(string))
	case "tz":
		ts, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			panic(err)
		}
		return ts
	}
	return v
}

// testTypes inserts the round-trip rows and reads them back, checking the
// Go type and value of every cell, in Returned too.
func (s *suite) testTypes(t *testing.T) {
	for _, c := range typeCols {
		if why := c.lack(&s.h.Lacks); why != "" {
			s.notTested(t, "round trip of conf_types."+c.name, c.what, why)
		}
	}
	if s.h.Lacks.Integers != "" {
		t.Logf("integers at their limits are not tested: %s", s.h.Lacks.Integers)
	}
	cols := s.typeColumns()
	p := s.writePlan(query.Insert, TableTypes)
	p.Columns = []string{"name"}
	for _, c := range cols {
		p.Columns = append(p.Columns, c.name)
	}
	for _, r := range typeRows {
		row := []any{r.name}
		for _, c := range cols {
			row = append(row, s.input(c.name, r.vals[c.name]))
		}
		p.Rows = append(p.Rows, row)
	}
	res := s.write(t, p)
	if res.RowsAffected != int64(len(typeRows)) {
		t.Errorf("RowsAffected %d, want %d", res.RowsAffected, len(typeRows))
	}
	if s.h.Lacks.ReturningInsert == "" {
		s.checkTypeRows(t, "Returned", res.Columns, res.Returned)
	}
	rcols, rows := readAll(t, s.src, s.readPlan(TableTypes, nil, p.Columns...))
	s.checkResultColumns(t, TableTypes, rcols, p.Columns)
	s.checkTypeRows(t, "Read", rcols, rows)
}

// checkTypeRows finds each round-trip row by name among rows (whose columns
// are cols) and compares every cell.
func (s *suite) checkTypeRows(t *testing.T, what string, cols []dialects.Column, rows [][]any) {
	t.Helper()
	idx := map[string]int{}
	for i, c := range cols {
		idx[c.Name] = i
	}
	ni, ok := idx["name"]
	if !ok {
		t.Errorf("%s: no name column in %v", what, cols)
		return
	}
	if len(rows) != len(typeRows) {
		t.Errorf("%s: %d rows, want %d", what, len(rows), len(typeRows))
	}
	for _, r := range typeRows {
		at := slices.IndexFunc(rows, func(row []any) bool { return row[ni] == r.name })
		if at < 0 {
			t.Errorf("%s: row %q missing", what, r.name)
			continue
		}
		for _, c := range s.typeColumns() {
			i, ok := idx[c.name]
			if !ok {
				t.Errorf("%s: column %s missing", what, c.name)
				continue
			}
			if why := sameCell(c.kind, rows[at][i], s.expected(c.name, r.vals[c.name])); why != "" {
				t.Errorf("%s %s.%s (%s): %s", what, r.name, c.name, c.kind, why)
			}
		}
	}
}

// testTypedFilters filters on typed columns with values as the engine
// binds them: the limits of integers, exact decimals, another spelling of
// the same instant, a UUID in another case.
func (s *suite) testTypedFilters(t *testing.T) {
	type tc struct {
		col   string
		where query.Expr
		want  []string
	}
	tz := func(v string) string { return cutFraction(v, s.h.timeDigits()) }
	tests := []tc{
		{"s", cond("s", query.Eq, typeRows[0].vals["s"]), []string{"max"}},
		{"s", cond("s", query.Eq, ""), []string{"min"}},
		{"f64", cond("f64", query.Eq, 0.1), []string{"mid"}},
		{"f64", cond("f64", query.Lt, 0.0), []string{"min"}},
		{"i64", cond("i64", query.Eq, int64(math.MaxInt64)), []string{"max"}},
		{"i64", cond("i64", query.Eq, int64(math.MinInt64)), []string{"min"}},
		{"i64", cond("i64", query.Between, int64(math.MinInt64), int64(0)), []string{"mid", "min"}},
		{"dec", cond("dec", query.Eq, "12345678901234.123456"), []string{"mid"}},
		{"dec", cond("dec", query.Gt, "12345678901234.123455"), []string{"max", "mid"}},
		{"dec", cond("dec", query.Eq, "-99999999999999.999999"), []string{"min"}},
		{"b", cond("b", query.Eq, true), []string{"max", "mid"}},
		{"b", cond("b", query.IsFalse), []string{"min"}},
		{"d", cond("d", query.Eq, "2024-02-29"), []string{"max"}},
		{"d", cond("d", query.Between, "1999-12-31", "2000-01-01"), []string{"mid", "min"}},
		{"ts", cond("ts", query.Eq, tz("2000-06-15T12:30:45.5")), []string{"mid"}},
		{"ts", cond("ts", query.Lt, "2000-01-01T00:00:00"), []string{"min"}},
		{"tz", cond("tz", query.Eq, tz("2024-02-29T21:59:59.123456Z")), []string{"max"}},
		{"tz", cond("tz", query.Lt, "2000-01-01T12:00:00+00:00"), []string{"min"}},
		{"tz", cond("tz", query.Gt, "2000-01-01T09:00:00+01:00"), []string{"max", "mid"}},
		{"u", cond("u", query.Eq, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), []string{"max"}},
		{"u", cond("u", query.Eq, "ffffffff-ffff-4fff-bfff-ffffffffffff"), []string{"min"}},
		{"u", cond("u", query.In, "00000000-0000-0000-0000-000000000000", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), []string{"max", "mid"}},
		{"j", cond("j", query.IsNull), []string{"nulls"}},
		{"by", cond("by", query.IsNotNull), []string{"max", "mid", "min"}},
		{"arr", cond("arr", query.IsNull), []string{"nulls"}},
	}
	has := map[string]bool{}
	for _, c := range s.typeColumns() {
		has[c.name] = true
	}
	for _, tt := range tests {
		if !has[tt.col] {
			continue // the round trip logged why
		}
		if got := s.names(t, TableTypes, tt.where); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s %v: got %q, want %q", tt.col, tt.where.(*query.Cond).Op, tt.where.(*query.Cond).Args, got, tt.want)
		}
	}
}
