package mi

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func TestRender(t *testing.T) {
	cond := func(col string, op query.Op, args ...any) *query.Cond {
		return &query.Cond{Column: col, Op: op, Args: args}
	}
	tests := []struct {
		name string
		plan query.Plan
		sql  string
		args []any
	}{
		{
			name: "read all",
			plan: query.Plan{Action: query.Read, Table: "t"},
			sql:  "SELECT id, data, created_at, updated_at FROM rows",
		},
		{
			name: "read filtered ordered paged",
			plan: query.Plan{
				Action: query.Read, Table: "t",
				Where: query.And{
					cond("title", query.Eq, "a'b"),
					cond("qty", query.Between, json.Number("1"), json.Number("2.5")),
					cond("created_at", query.Ge, int64(10)),
				},
				Order: []query.Order{{Column: "qty", Desc: true}, {Column: "id"}},
				Limit: 10, Offset: 20,
			},
			sql:  `SELECT id, data, created_at, updated_at FROM rows WHERE (json_extract(data, ?) = ? AND json_extract(data, ?) BETWEEN ? AND ? AND created_at >= ?) ORDER BY json_extract(data, ?) DESC, id ASC LIMIT ? OFFSET ?`,
			args: []any{`$."title"`, "a'b", `$."qty"`, int64(1), 2.5, int64(10), `$."qty"`, int64(10), int64(20)},
		},
		{
			name: "offset without limit",
			plan: query.Plan{Action: query.Read, Offset: 3},
			sql:  "SELECT id, data, created_at, updated_at FROM rows LIMIT ? OFFSET ?",
			args: []any{int64(-1), int64(3)},
		},
		{
			name: "operators",
			plan: query.Plan{Action: query.Read, Where: query.Or{
				cond("a", query.Ne, true),
				cond("b", query.Gt, 1.5),
				cond("c", query.Lt, 3),
				cond("d", query.Le, json.Number("4")),
				cond("e", query.Like, `a%b\_c*`),
				cond("f", query.ILike, `%X%`),
				cond("g", query.In, "x", "y"),
				cond("h", query.NotIn, int64(1)),
				cond("i", query.IsNull),
				cond("j", query.IsNotNull),
				cond("k", query.IsTrue),
				cond("l", query.IsFalse),
				query.Not{X: cond("m", query.Eq, []any{"p", json.Number("1")})},
				cond("n", query.Eq, map[string]any{"z": 1, "a": false}),
				query.And{},
				query.Or{},
				cond("o", query.In),
			}},
			sql: `SELECT id, data, created_at, updated_at FROM rows WHERE (json_extract(data, ?) <> ? OR json_extract(data, ?) > ? OR json_extract(data, ?) < ? OR json_extract(data, ?) <= ? OR json_extract(data, ?) GLOB ? OR json_extract(data, ?) LIKE ? ESCAPE '\' OR json_extract(data, ?) IN (?, ?) OR json_extract(data, ?) NOT IN (?) OR json_extract(data, ?) IS NULL OR json_extract(data, ?) IS NOT NULL OR json_type(data, ?) = 'true' OR json_type(data, ?) = 'false' OR NOT (json_extract(data, ?) = ?) OR json_extract(data, ?) = ? OR 1 OR 0 OR 0)`,
			args: []any{
				`$."a"`, int64(1), `$."b"`, 1.5, `$."c"`, int64(3), `$."d"`, int64(4),
				`$."e"`, "a*b_c[*]", `$."f"`, "%X%", `$."g"`, "x", "y", `$."h"`, int64(1),
				`$."i"`, `$."j"`, `$."k"`, `$."l"`, `$."m"`, `["p",1]`, `$."n"`, `{"a":false,"z":1}`,
			},
		},
		{
			name: "field names are bound, never spliced",
			plan: query.Plan{Action: query.Read, Where: cond(`x") OR 1=1 --`, query.Eq, "v")},
			sql:  `SELECT id, data, created_at, updated_at FROM rows WHERE json_extract(data, ?) = ?`,
			args: []any{`$."x\") OR 1=1 --"`, "v"},
		},
		{
			name: "update selects the rows it changes",
			plan: query.Plan{Action: query.Update, Where: cond("id", query.Eq, "abc"), Set: []query.Assign{{Column: "title", Value: "x"}}},
			sql:  "SELECT id, data FROM rows WHERE id = ?",
			args: []any{"abc"},
		},
		{
			name: "delete all",
			plan: query.Plan{Action: query.Delete, All: true},
			sql:  "SELECT id, data FROM rows",
		},
		{
			name: "insert",
			plan: query.Plan{
				Action:  query.Insert,
				Columns: []string{"id", "title", "qty", "tags", "created_at"},
				Rows: [][]any{
					{query.Default{}, "a", json.Number("5.0"), []any{"x"}, nil},
					{nil, "b", query.Default{}, nil, query.Default{}},
				},
			},
			sql:  "INSERT INTO rows (id, data, created_at, updated_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
			args: []any{IDMarker, `{"qty":5.0,"tags":["x"],"title":"a"}`, NowMarker, NowMarker, IDMarker, `{"tags":null,"title":"b"}`, NowMarker, NowMarker},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Dialect{}.Render(&tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if st.SQL != tt.sql {
				t.Errorf("SQL\n got %s\nwant %s", st.SQL, tt.sql)
			}
			if !reflect.DeepEqual(st.Args, tt.args) {
				t.Errorf("args\n got %#v\nwant %#v", st.Args, tt.args)
			}
			again, _ := Dialect{}.Render(&tt.plan)
			if !reflect.DeepEqual(st, again) {
				t.Error("Render is not deterministic")
			}
		})
	}
}

func TestRenderRefusals(t *testing.T) {
	tests := []struct {
		name string
		plan query.Plan
		kind fault.Kind
		msg  string
	}{
		{"insert id", query.Plan{Action: query.Insert, Columns: []string{"id", "t"}, Rows: [][]any{{"x", "y"}}}, fault.Unsupported, `column "id" is filled by the database`},
		{"insert created_at", query.Plan{Action: query.Insert, Columns: []string{"created_at"}, Rows: [][]any{{int64(1)}}}, fault.Unsupported, `column "created_at" is filled by the database`},
		{"insert ragged", query.Plan{Action: query.Insert, Columns: []string{"a", "b"}, Rows: [][]any{{"x"}}}, fault.Invalid, "1 values for 2 columns"},
		{"insert nothing", query.Plan{Action: query.Insert, Columns: []string{"a"}}, fault.Invalid, "no rows"},
		{"insert twice", query.Plan{Action: query.Insert, Columns: []string{"a", "a"}, Rows: [][]any{{"x", "y"}}}, fault.Invalid, `column "a" is given twice`},
		{"insert NaN", query.Plan{Action: query.Insert, Columns: []string{"a"}, Rows: [][]any{{math.NaN()}}}, fault.Invalid, `field "a"`},
		{"update updated_at", query.Plan{Action: query.Update, All: true, Set: []query.Assign{{Column: "updated_at", Value: int64(1)}}}, fault.Unsupported, `column "updated_at" is filled by the database`},
		{"update unfiltered", query.Plan{Action: query.Update, Set: []query.Assign{{Column: "a", Value: "x"}}}, fault.Invalid, "needs all=true"},
		{"delete unfiltered", query.Plan{Action: query.Delete}, fault.Invalid, "needs all=true"},
		{"eq nil", query.Plan{Action: query.Read, Where: &query.Cond{Column: "a", Op: query.Eq, Args: []any{nil}}}, fault.Invalid, "is.null"},
		{"bw one value", query.Plan{Action: query.Read, Where: &query.Cond{Column: "a", Op: query.Between, Args: []any{1}}}, fault.Invalid, "takes 2"},
		{"like number", query.Plan{Action: query.Read, Where: &query.Cond{Column: "a", Op: query.Like, Args: []any{1}}}, fault.Invalid, "text pattern"},
		{"unknown op", query.Plan{Action: query.Read, Where: &query.Cond{Column: "a", Op: "regex", Args: []any{"x"}}}, fault.Unsupported, "regex"},
		{"negative limit", query.Plan{Action: query.Read, Limit: -1}, fault.Invalid, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Dialect{}.Render(&tt.plan)
			if err == nil {
				t.Fatal("no error")
			}
			if k := fault.KindOf(err); k != tt.kind {
				t.Errorf("kind %v, want %v (%v)", k, tt.kind, err)
			}
			if !strings.Contains(fault.As(err).Message, tt.msg) {
				t.Errorf("message %q does not name %q", fault.As(err).Message, tt.msg)
			}
		})
	}
}

func TestLikeToGlob(t *testing.T) {
	for in, want := range map[string]string{
		"abc":        "abc",
		"a%":         "a*",
		"_x_":        "?x?",
		`100\%`:      "100%",
		`a\_b`:       "a_b",
		`a\\b`:       `a\b`,
		"*?[":        "[*][?][[]",
		"]":          "]",
		`trailing\`:  `trailing\`,
		"é%ü":        "é*ü",
		`\*\[`:       "[*][[]",
		"%[abc]%":    "*[[]abc]*",
		"plain text": "plain text",
	} {
		if got := likeToGlob(in); got != want {
			t.Errorf("likeToGlob(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"5":                     "5",
		"5.0":                   "5.0",
		"5.00":                  "5.0",
		"-12":                   "-12",
		"-0":                    "-0.0",
		"0":                     "0",
		"0.1":                   "0.1",
		"1e3":                   "1000.0",
		"1E3":                   "1000.0",
		"2.5e-3":                "0.0025",
		"1e-7":                  "1e-7",
		"1.5e-7":                "1.5e-7",
		"1e20":                  "1e20",
		"12345678901234567890":  "12345678901234567890",
		"123456789012345678901": "1.2345678901234568e20",
		"9223372036854775807":   "9223372036854775807",
		"-9223372036854775809":  "-9.223372036854776e18",
		"1e16":                  "1e16",
		"1e15":                  "1000000000000000.0",
		"0.00001":               "0.00001",
		"0.000001":              "1e-6",
		"123.456":               "123.456",
	} {
		got, err := canonicalNumber(in)
		if err != nil || got != want {
			t.Errorf("canonicalNumber(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "+1", "0x10", "1e400", "NaN"} {
		if got, err := canonicalNumber(bad); err == nil {
			t.Errorf("canonicalNumber(%q) = %q, want an error", bad, got)
		}
	}
}

func TestEncodeJSON(t *testing.T) {
	v := map[string]any{
		"b":     "x<y&z\u2028\"\\\n\t\x01\x7f",
		"a":     []any{json.Number("1"), 2.0, int64(3), true, nil, map[string]any{"y": 1, "x": 2}, 2.5, 1e300},
		"Z":     json.RawMessage(`{"k" : [ 1.0 , "v" ]}`),
		"é":     float32(0.5),
		"inner": map[string]any{},
	}
	got, err := encodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Z":{"k":[1.0,"v"]},"a":[1,2,3,true,null,{"x":2,"y":1},2.5,1e300],"b":"x<y&z` + "\u2028" + `\"\\\n\t\u0001` + "\x7f" + `","inner":{},"é":0.5}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := encodeJSON(map[string]any{"x": json.RawMessage(`{`)}); err == nil {
		t.Error("invalid RawMessage encoded")
	}
}

func TestRenderNilExpressions(t *testing.T) {
	for _, e := range []query.Expr{(*query.And)(nil), (*query.Or)(nil), (*query.Not)(nil), (*query.Cond)(nil)} {
		_, err := Dialect{}.Render(&query.Plan{Action: query.Read, Table: "t", Columns: []string{"id"}, Where: e})
		if fault.KindOf(err) != fault.Invalid {
			t.Errorf("%T: %v", e, err)
		}
	}
}
