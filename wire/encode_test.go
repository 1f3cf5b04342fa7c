package wire

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// fakeRows yields n rows, cycling through data. Values fails at row errAt
// (0-based) when valErr is set; Err returns err. It does not allocate per
// row, so allocation counts measure the encoders alone.
type fakeRows struct {
	cols   []dialects.Column
	data   [][]any
	n, i   int
	errAt  int
	valErr error
	err    error
}

func newRows(names []string, data ...[]any) *fakeRows {
	cols := make([]dialects.Column, len(names))
	for i, n := range names {
		cols[i] = dialects.Column{Name: n}
	}
	return &fakeRows{cols: cols, data: data, n: len(data)}
}

func (r *fakeRows) Columns() []dialects.Column { return r.cols }

func (r *fakeRows) Next() bool {
	if r.i >= r.n {
		return false
	}
	r.i++
	return true
}

func (r *fakeRows) Values() ([]any, error) {
	if r.valErr != nil && r.i-1 == r.errAt {
		return nil, r.valErr
	}
	return r.data[(r.i-1)%len(r.data)], nil
}

func (r *fakeRows) Err() error   { return r.err }
func (r *fakeRows) Close() error { return nil }

var (
	sampleCols = []string{"id", "name", "note", "price", "big", "score", "ok", "created", "raw", "tags", "blob", "odd key"}
	created1   = time.Date(2024, 3, 5, 14, 30, 0, 123456000, time.FixedZone("IST", 5*3600+1800))
	created2   = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	sampleRow1 = []any{int64(1), "Zoë “curly” \"straight\", comma", "line1\nline2\ttab\r\\", json.Number("12345678901234567890.123456789"),
		int64(9007199254740993), 1.5, true, created1, json.RawMessage("{\"a\": [1, 2],\n \"b\": \"x y\"}"),
		[]any{"a", int64(2), nil, []any{true, 2.5}}, []byte("hi\x01\xff"), "x"}
	sampleRow2 = []any{int64(2), "日本語 <&> 'single' \u2028", "", json.Number("-0.5"),
		int64(-9007199254740993), 1e-7, false, created2, json.RawMessage(`[]`),
		[]any{map[string]any{"z": int64(1), "a": "x"}}, []byte{}, " lead"}
	sampleRow3 = []any{int64(3), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
)

// sampleRows holds unicode, quotes, commas, newlines, control bytes, nulls,
// integers beyond 2^53, an exact decimal, times with zones, raw JSON, nested
// arrays and an object.
func sampleRows() *fakeRows {
	return newRows(sampleCols, sampleRow1, sampleRow2, sampleRow3)
}

var samplePage = &Page{Number: 2, Size: 3}

const (
	goldenJSON = `{"data":[{"id":1,"name":"Zoë “curly” \"straight\", comma","note":"line1\nline2\ttab\r\\","price":12345678901234567890.123456789,"big":9007199254740993,"score":1.5,"ok":true,"created":"2024-03-05T14:30:00.123456+05:30","raw":{"a":[1,2],"b":"x y"},"tags":["a",2,null,[true,2.5]],"blob":"aGkB/w==","odd key":"x"},{"id":2,"name":"日本語 <&> 'single' \u2028","note":"","price":-0.5,"big":-9007199254740993,"score":1e-7,"ok":false,"created":"2024-01-02T03:04:05Z","raw":[],"tags":[{"a":"x","z":1}],"blob":"","odd key":" lead"},{"id":3,"name":null,"note":null,"price":null,"big":null,"score":null,"ok":null,"created":null,"raw":null,"tags":null,"blob":null,"odd key":null}],"page":{"number":2,"size":3}}
`
	goldenNDJSON = `{"id":1,"name":"Zoë “curly” \"straight\", comma","note":"line1\nline2\ttab\r\\","price":12345678901234567890.123456789,"big":9007199254740993,"score":1.5,"ok":true,"created":"2024-03-05T14:30:00.123456+05:30","raw":{"a":[1,2],"b":"x y"},"tags":["a",2,null,[true,2.5]],"blob":"aGkB/w==","odd key":"x"}
{"id":2,"name":"日本語 <&> 'single' \u2028","note":"","price":-0.5,"big":-9007199254740993,"score":1e-7,"ok":false,"created":"2024-01-02T03:04:05Z","raw":[],"tags":[{"a":"x","z":1}],"blob":"","odd key":" lead"}
{"id":3,"name":null,"note":null,"price":null,"big":null,"score":null,"ok":null,"created":null,"raw":null,"tags":null,"blob":null,"odd key":null}
`
	goldenCSV  = "id,name,note,price,big,score,ok,created,raw,tags,blob,odd key\n1,\"Zoë “curly” \"\"straight\"\", comma\",\"line1\nline2\ttab\r\\\",12345678901234567890.123456789,9007199254740993,1.5,true,2024-03-05T14:30:00.123456+05:30,\"{\"\"a\"\":[1,2],\"\"b\"\":\"\"x y\"\"}\",\"[\"\"a\"\",2,null,[true,2.5]]\",aGkB/w==,x\n2,日本語 <&> 'single' \u2028,\"\",-0.5,-9007199254740993,1e-7,false,2024-01-02T03:04:05Z,[],\"[{\"\"a\"\":\"\"x\"\",\"\"z\"\":1}]\",\"\",\" lead\"\n3,,,,,,,,,,,\n"
	goldenXML  = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<response><data><row><id>1</id><name>Zoë “curly” &#34;straight&#34;, comma</name><note>line1&#xA;line2&#x9;tab&#xD;\\</note><price>12345678901234567890.123456789</price><big>9007199254740993</big><score>1.5</score><ok>true</ok><created>2024-03-05T14:30:00.123456+05:30</created><raw><a><item>1</item><item>2</item></a><b>x y</b></raw><tags><item>a</item><item>2</item><item null=\"true\"/><item><item>true</item><item>2.5</item></item></tags><blob>aGkB/w==</blob><column name=\"odd key\">x</column></row><row><id>2</id><name>日本語 &lt;&amp;&gt; &#39;single&#39; \u2028</name><note></note><price>-0.5</price><big>-9007199254740993</big><score>1e-7</score><ok>false</ok><created>2024-01-02T03:04:05Z</created><raw></raw><tags><item><a>x</a><z>1</z></item></tags><blob></blob><column name=\"odd key\"> lead</column></row><row><id>3</id><name null=\"true\"/><note null=\"true\"/><price null=\"true\"/><big null=\"true\"/><score null=\"true\"/><ok null=\"true\"/><created null=\"true\"/><raw null=\"true\"/><tags null=\"true\"/><blob null=\"true\"/><column name=\"odd key\" null=\"true\"/></row></data><page number=\"2\" size=\"3\"/></response>\n"
	goldenBSON = "\x19\x01\x00\x00\x12id\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02name\x00#\x00\x00\x00Zoë “curly” \"straight\", comma\x00\x02note\x00\x12\x00\x00\x00line1\nline2\ttab\r\\\x00\x13price\x00\x15\x819n\xb1ɾF2\x1b\xe4'\x00\x00.0\x12big\x00\x01\x00\x00\x00\x00\x00 \x00\x01score\x00\x00\x00\x00\x00\x00\x00\xf8?\bok\x00\x01\tcreated\x00\xfbV\xd7\r\x8e\x01\x00\x00\x02raw\x00\x16\x00\x00\x00{\"a\":[1,2],\"b\":\"x y\"}\x00\x04tags\x003\x00\x00\x00\x020\x00\x02\x00\x00\x00a\x00\x121\x00\x02\x00\x00\x00\x00\x00\x00\x00\n2\x00\x043\x00\x14\x00\x00\x00\b0\x00\x01\x011\x00\x00\x00\x00\x00\x00\x00\x04@\x00\x00\x05blob\x00\x04\x00\x00\x00\x00hi\x01\xff\x02odd key\x00\x02\x00\x00\x00x\x00\x00\xdb\x00\x00\x00\x12id\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02name\x00\x1b\x00\x00\x00日本語 <&> 'single' \u2028\x00\x02note\x00\x01\x00\x00\x00\x00\x13price\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00>\xb0\x12big\x00\xff\xff\xff\xff\xff\xff\xdf\xff\x01score\x00H\xaf\xbc\x9a\xf2\xd7z>\bok\x00\x00\tcreated\x00\x88\xd8 Ȍ\x01\x00\x00\x02raw\x00\x03\x00\x00\x00[]\x00\x04tags\x00!\x00\x00\x00\x030\x00\x19\x00\x00\x00\x02a\x00\x02\x00\x00\x00x\x00\x12z\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05blob\x00\x00\x00\x00\x00\x00\x02odd key\x00\x06\x00\x00\x00 lead\x00\x00W\x00\x00\x00\x12id\x00\x03\x00\x00\x00\x00\x00\x00\x00\nname\x00\nnote\x00\nprice\x00\nbig\x00\nscore\x00\nok\x00\ncreated\x00\nraw\x00\ntags\x00\nblob\x00\nodd key\x00\x00"
	goldenYAML = `data:
  - id: 1
    name: "Zoë “curly” \"straight\", comma"
    note: "line1\nline2\ttab\r\\"
    price: 12345678901234567890.123456789
    big: 9007199254740993
    score: 1.5
    ok: true
    created: "2024-03-05T14:30:00.123456+05:30"
    raw: {"a": [1, 2], "b": "x y"}
    tags: ["a", 2, null, [true, 2.5]]
    blob: "aGkB/w=="
    "odd key": "x"
  - id: 2
    name: "日本語 <&> 'single' \u2028"
    note: ""
    price: -0.5
    big: -9007199254740993
    score: 1e-7
    ok: false
    created: "2024-01-02T03:04:05Z"
    raw: []
    tags: [{"a": "x", "z": 1}]
    blob: ""
    "odd key": " lead"
  - id: 3
    name: null
    note: null
    price: null
    big: null
    score: null
    ok: null
    created: null
    raw: null
    tags: null
    blob: null
    "odd key": null
page:
  number: 2
  size: 3
`
)

func stream(t *testing.T, f Format, rows dialects.Rows, page *Page) string {
	t.Helper()
	var b bytes.Buffer
	n, err := Stream(&b, f, rows, page)
	if err != nil {
		t.Fatalf("Stream(%s): %v", f, err)
	}
	if r, ok := rows.(*fakeRows); ok && n != int64(r.n) {
		t.Fatalf("Stream(%s) = %d rows, want %d", f, n, r.n)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		format Format
		want   string
	}{
		{JSON, goldenJSON},
		{NDJSON, goldenNDJSON},
		{CSV, goldenCSV},
		{XML, goldenXML},
		{YAML, goldenYAML},
		{BSON, goldenBSON},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			if got := stream(t, tc.format, sampleRows(), samplePage); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestEmptyAndNoPage(t *testing.T) {
	empty := func() *fakeRows { return newRows([]string{"a", "b"}) }
	for _, tc := range []struct {
		format Format
		rows   *fakeRows
		page   *Page
		want   string
	}{
		{JSON, empty(), &Page{Size: 10}, `{"data":[],"page":{"number":0,"size":10}}` + "\n"},
		{JSON, empty(), nil, `{"data":[]}` + "\n"},
		{JSON, newRows(nil, []any{}), nil, `{"data":[{}]}` + "\n"},
		{NDJSON, empty(), &Page{Size: 10}, ""},
		{CSV, empty(), nil, "a,b\n"},
		{XML, empty(), nil, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<response><data></data></response>\n"},
		{YAML, empty(), &Page{Number: 1, Size: 10}, "data: []\npage:\n  number: 1\n  size: 10\n"},
		{YAML, empty(), nil, "data: []\n"},
		{YAML, newRows(nil, []any{}), nil, "data:\n  - {}\n"},
		{BSON, empty(), nil, ""},
		{"", newRows([]string{"a"}, []any{int64(1)}), nil, `{"data":[{"a":1}]}` + "\n"},
	} {
		if got := stream(t, tc.format, tc.rows, tc.page); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.format, got, tc.want)
		}
	}
}

func TestJSONParses(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	wantRows := []any{
		map[string]any{"id": n("1"), "name": "Zoë “curly” \"straight\", comma", "note": "line1\nline2\ttab\r\\",
			"price": n("12345678901234567890.123456789"), "big": n("9007199254740993"), "score": n("1.5"), "ok": true,
			"created": "2024-03-05T14:30:00.123456+05:30", "raw": map[string]any{"a": []any{n("1"), n("2")}, "b": "x y"},
			"tags": []any{"a", n("2"), nil, []any{true, n("2.5")}}, "blob": "aGkB/w==", "odd key": "x"},
		map[string]any{"id": n("2"), "name": "日本語 <&> 'single' \u2028", "note": "",
			"price": n("-0.5"), "big": n("-9007199254740993"), "score": n("1e-7"), "ok": false,
			"created": "2024-01-02T03:04:05Z", "raw": []any{},
			"tags": []any{map[string]any{"a": "x", "z": n("1")}}, "blob": "", "odd key": " lead"},
		map[string]any{"id": n("3"), "name": nil, "note": nil, "price": nil, "big": nil, "score": nil, "ok": nil,
			"created": nil, "raw": nil, "tags": nil, "blob": nil, "odd key": nil},
	}
	decode := func(s string) any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		return v
	}
	got := decode(stream(t, JSON, sampleRows(), samplePage))
	want := map[string]any{"data": wantRows, "page": map[string]any{"number": n("2"), "size": n("3")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("json decodes to\n%#v\nwant\n%#v", got, want)
	}
	lines := strings.Split(strings.TrimSuffix(stream(t, NDJSON, sampleRows(), nil), "\n"), "\n")
	if len(lines) != len(wantRows) {
		t.Fatalf("ndjson has %d lines, want %d", len(lines), len(wantRows))
	}
	for i, l := range lines {
		if got := decode(l); !reflect.DeepEqual(got, wantRows[i]) {
			t.Errorf("ndjson line %d decodes to %#v, want %#v", i, got, wantRows[i])
		}
	}
	// The time strings read back as the same instants.
	for i, want := range []time.Time{created1, created2} {
		s := wantRows[i].(map[string]any)["created"].(string)
		if tm, err := time.Parse(time.RFC3339Nano, s); err != nil || !tm.Equal(want) {
			t.Errorf("created %q parses to %v, %v; want %v", s, tm, err, want)
		}
	}
}

func TestCSVParses(t *testing.T) {
	got, err := csv.NewReader(strings.NewReader(stream(t, CSV, sampleRows(), nil))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		sampleCols,
		{"1", "Zoë “curly” \"straight\", comma", "line1\nline2\ttab\r\\", "12345678901234567890.123456789", "9007199254740993", "1.5", "true",
			"2024-03-05T14:30:00.123456+05:30", `{"a":[1,2],"b":"x y"}`, `["a",2,null,[true,2.5]]`, "aGkB/w==", "x"},
		{"2", "日本語 <&> 'single' \u2028", "", "-0.5", "-9007199254740993", "1e-7", "false",
			"2024-01-02T03:04:05Z", "[]", `[{"a":"x","z":1}]`, "", " lead"},
		{"3", "", "", "", "", "", "", "", "", "", "", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("csv reads as\n%q\nwant\n%q", got, want)
	}
}

// xmlNode is a generic element for checking the XML output.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []xmlNode  `xml:",any"`
}

func (n xmlNode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// flat renders an element compactly: text, null, or its children.
func (n xmlNode) flat() string {
	if v, ok := n.attr("null"); ok && v == "true" {
		return "<null>"
	}
	if len(n.Nodes) == 0 {
		return n.Text
	}
	parts := make([]string, len(n.Nodes))
	for i, c := range n.Nodes {
		name := c.XMLName.Local
		if v, ok := c.attr("name"); ok && name == "column" {
			name = v
		}
		parts[i] = name + "=" + c.flat()
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func TestXMLParses(t *testing.T) {
	var doc xmlNode
	if err := xml.Unmarshal([]byte(stream(t, XML, sampleRows(), samplePage)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.XMLName.Local != "response" || len(doc.Nodes) != 2 || doc.Nodes[0].XMLName.Local != "data" {
		t.Fatalf("unexpected document shape: %+v", doc)
	}
	page := doc.Nodes[1]
	if num, _ := page.attr("number"); page.XMLName.Local != "page" || num != "2" {
		t.Errorf("page element = %+v", page)
	}
	want := []string{
		"{id=1 name=Zoë “curly” \"straight\", comma note=line1\nline2\ttab\r\\ price=12345678901234567890.123456789 big=9007199254740993 " +
			"score=1.5 ok=true created=2024-03-05T14:30:00.123456+05:30 raw={a={item=1 item=2} b=x y} " +
			"tags={item=a item=2 item=<null> item={item=true item=2.5}} blob=aGkB/w== odd key=x}",
		"{id=2 name=日本語 <&> 'single' \u2028 note= price=-0.5 big=-9007199254740993 score=1e-7 ok=false created=2024-01-02T03:04:05Z " +
			"raw= tags={item={a=x z=1}} blob= odd key= lead}",
		"{id=3 name=<null> note=<null> price=<null> big=<null> score=<null> ok=<null> created=<null> raw=<null> tags=<null> blob=<null> odd key=<null>}",
	}
	rows := doc.Nodes[0].Nodes
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if got := r.flat(); got != want[i] {
			t.Errorf("row %d reads as\n%q\nwant\n%q", i, got, want[i])
		}
	}
}

func TestYAMLParses(t *testing.T) {
	var got map[string]any
	if err := yaml.Unmarshal([]byte(stream(t, YAML, sampleRows(), samplePage)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"data": []any{
			map[string]any{"id": 1, "name": "Zoë “curly” \"straight\", comma", "note": "line1\nline2\ttab\r\\",
				"price": 12345678901234567890.123456789, "big": 9007199254740993, "score": 1.5, "ok": true,
				"created": "2024-03-05T14:30:00.123456+05:30", "raw": map[string]any{"a": []any{1, 2}, "b": "x y"},
				"tags": []any{"a", 2, nil, []any{true, 2.5}}, "blob": "aGkB/w==", "odd key": "x"},
			map[string]any{"id": 2, "name": "日本語 <&> 'single' \u2028", "note": "",
				"price": -0.5, "big": -9007199254740993, "score": 1e-7, "ok": false,
				"created": "2024-01-02T03:04:05Z", "raw": []any{},
				"tags": []any{map[string]any{"a": "x", "z": 1}}, "blob": "", "odd key": " lead"},
			map[string]any{"id": 3, "name": nil, "note": nil, "price": nil, "big": nil, "score": nil, "ok": nil,
				"created": nil, "raw": nil, "tags": nil, "blob": nil, "odd key": nil},
		},
		"page": map[string]any{"number": 2, "size": 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("yaml reads as\n%#v\nwant\n%#v", got, want)
	}
}

// splitBSON cuts a stream of BSON documents, validating each.
func splitBSON(t *testing.T, b []byte) []bson.Raw {
	t.Helper()
	var docs []bson.Raw
	for len(b) > 0 {
		doc, rest, ok := bsoncore.ReadDocument(b)
		if !ok {
			t.Fatalf("truncated BSON document at %q", b)
		}
		if err := bson.Raw(doc).Validate(); err != nil {
			t.Fatalf("invalid BSON document: %v", err)
		}
		docs = append(docs, bson.Raw(doc))
		b = rest
	}
	return docs
}

func TestBSONDecodes(t *testing.T) {
	dec := func(s string) bson.Decimal128 {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	e := func(k string, v any) bson.E { return bson.E{Key: k, Value: v} }
	want := []bson.D{
		{e("id", int64(1)), e("name", "Zoë “curly” \"straight\", comma"), e("note", "line1\nline2\ttab\r\\"),
			e("price", dec("12345678901234567890.123456789")), e("big", int64(9007199254740993)), e("score", 1.5), e("ok", true),
			e("created", bson.NewDateTimeFromTime(created1)), e("raw", `{"a":[1,2],"b":"x y"}`),
			e("tags", bson.A{"a", int64(2), nil, bson.A{true, 2.5}}), e("blob", bson.Binary{Data: []byte("hi\x01\xff")}), e("odd key", "x")},
		{e("id", int64(2)), e("name", "日本語 <&> 'single' \u2028"), e("note", ""),
			e("price", dec("-0.5")), e("big", int64(-9007199254740993)), e("score", 1e-7), e("ok", false),
			e("created", bson.NewDateTimeFromTime(created2)), e("raw", "[]"),
			e("tags", bson.A{bson.D{e("a", "x"), e("z", int64(1))}}), e("blob", bson.Binary{Data: []byte{}}), e("odd key", " lead")},
		{e("id", int64(3)), e("name", nil), e("note", nil), e("price", nil), e("big", nil), e("score", nil), e("ok", nil),
			e("created", nil), e("raw", nil), e("tags", nil), e("blob", nil), e("odd key", nil)},
	}
	docs := splitBSON(t, []byte(stream(t, BSON, sampleRows(), samplePage)))
	if len(docs) != len(want) {
		t.Fatalf("%d documents, want %d", len(docs), len(want))
	}
	for i, raw := range docs {
		var got bson.D
		if err := bson.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		// An empty binary may decode as nil data.
		for j := range got {
			if b, ok := got[j].Value.(bson.Binary); ok && b.Data == nil {
				b.Data = []byte{}
				got[j].Value = b
			}
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("document %d decodes to\n%#v\nwant\n%#v", i, got, want[i])
		}
	}
	if got := dec("12345678901234567890.123456789").String(); got != "12345678901234567890.123456789" {
		t.Errorf("decimal round trip = %s", got)
	}
}

func TestBSONNumbers(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "7", "-7", "1.5", "-0.5", "0.000", "12345678901234567890.123456789", "1e10", "1E-5", "-1.25e+300",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
		"123456789012345678901234567890", "9999999999999999999999999999999999", "0.0000000000000000000000000000000001",
		"99999999999999999999999999999999990", "1e6111", "1e6112", "1e-6176", "1e-6177", "1e99999", "12345678901234567890123456789012345",
		"NaN", "+1", "1.", ".5", "0x10", "",
	} {
		got, typ := appendBSONNumber(nil, s)
		var want []byte
		var wantTyp bsoncore.Type
		var i int64
		switch {
		case !isValidNumber(s):
			want, wantTyp = bsoncore.AppendString(nil, s), bsoncore.TypeString
		case !strings.ContainsAny(s, ".eE") && func() bool { _, err := fmt.Sscan(s, &i); return err == nil }():
			want, wantTyp = bsoncore.AppendInt64(nil, i), bsoncore.TypeInt64
		default:
			if d, err := bson.ParseDecimal128(s); err == nil {
				hi, lo := d.GetBytes()
				want, wantTyp = bsoncore.AppendDecimal128(nil, hi, lo), bsoncore.TypeDecimal128
			} else {
				want, wantTyp = bsoncore.AppendString(nil, s), bsoncore.TypeString
			}
		}
		if typ != wantTyp || !bytes.Equal(got, want) {
			t.Errorf("%q: got %v %x, want %v %x", s, typ, got, wantTyp, want)
		}
	}
	for _, u := range []uint64{0, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64} {
		got, _ := appendBSONValue(nil, u, 0)
		var want []byte
		if u <= math.MaxInt64 {
			want = bsoncore.AppendInt64(nil, int64(u))
		} else {
			d, _ := bson.ParseDecimal128(fmt.Sprint(u))
			hi, lo := d.GetBytes()
			want = bsoncore.AppendDecimal128(nil, hi, lo)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("uint64 %d: got %x, want %x", u, got, want)
		}
	}
}

func TestAppendJSONValue(t *testing.T) {
	type point struct{ X, Y int }
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{true, `true`},
		{int8(-3), `-3`},
		{int32(7), `7`},
		{uint16(9), `9`},
		{uint64(math.MaxUint64), `18446744073709551615`},
		{int64(math.MinInt64), `-9223372036854775808`},
		{int(9007199254740993), `9007199254740993`},
		{float32(0.1), `0.1`},
		{1e21, `1e+21`},
		{1e20, `100000000000000000000`},
		{-2.5e-9, `-2.5e-9`},
		{0.0, `0`},
		{math.NaN(), `"NaN"`},
		{math.Inf(1), `"Infinity"`},
		{math.Inf(-1), `"-Infinity"`},
		{json.Number("1e5"), `1e5`},
		{json.Number("-0.0"), `-0.0`},
		{json.Number("+1"), `"+1"`},
		{json.Number("NaN"), `"NaN"`},
		{json.Number("1."), `"1."`},
		{json.Number(""), `""`},
		{"a<b>&\"\\\x00\x1f\x7f\u2028\u2029\xff", `"a<b>&\"\\\u0000\u001f` + "\x7f" + `\u2028\u2029\ufffd"`},
		{time.Date(2024, 1, 2, 3, 4, 5, 100000000, time.UTC), `"2024-01-02T03:04:05.1Z"`},
		{[]byte(nil), `""`},
		{[]byte{0xfb, 0xff}, `"+/8="`},
		{json.RawMessage(nil), `null`},
		{json.RawMessage(" {\"a\" :\t[ 1 , \"x y\\\" z\" ]}\n"), `{"a":[1,"x y\" z"]}`},
		{json.RawMessage("\"\u2028\xff\""), `"\u2028\ufffd"`},
		{json.RawMessage("{bad"), `"{bad"`},
		{json.RawMessage("[1,]"), `"[1,]"`},
		{json.RawMessage("01"), `"01"`},
		{json.RawMessage("[1] x"), `"[1] x"`},
		{json.RawMessage("  "), `"  "`},
		{json.RawMessage("\"\\x\""), `"\"\\x\""`},
		{json.RawMessage("\"\x01\""), `"\"\u0001\""`},
		{json.RawMessage(`{"a":1,}`), `"{\"a\":1,}"`},
		{json.RawMessage(`{"a" 1}`), `"{\"a\" 1}"`},
		{json.RawMessage(`{1:1}`), `"{1:1}"`},
		{json.RawMessage(` -0.5e+3 `), `-0.5e+3`},
		{json.RawMessage(`"\u00e9\/"`), `"\u00e9\/"`},
		{json.RawMessage(`[{} , [ ] ,{"":null}]`), `[{},[],{"":null}]`},
		{[]any{}, `[]`},
		{map[string]any{}, `{}`},
		{map[string]any{"b": []any{int64(1), nil}, "a": map[string]any{"y": "z"}, "\n": false}, `{"\n":false,"a":{"y":"z"},"b":[1,null]}`},
		{point{1, 2}, `"{1 2}"`},
		{errors.New("boom"), `"boom"`},
	} {
		got := string(AppendJSONValue([]byte("x"), tc.v))
		if got != "x"+tc.want {
			t.Errorf("AppendJSONValue(%#v) = %s, want %s", tc.v, got[1:], tc.want)
		}
		if !json.Valid([]byte(got[1:])) {
			t.Errorf("AppendJSONValue(%#v) = %s is not valid JSON", tc.v, got[1:])
		}
	}
	// A value that contains itself stops at the depth bound instead of
	// recursing forever.
	loop := []any{nil}
	loop[0] = loop
	if got := AppendJSONValue(nil, loop); !json.Valid(got) || !bytes.HasSuffix(got, []byte("[null]"+strings.Repeat("]", maxDepth-1))) {
		t.Errorf("self-containing value gives %.40s...", got)
	}
}

// trickyStrings exercise the escaping of every format.
var trickyStrings = []string{
	"", " ", " lead", "trail ", "plain", "a,b", `say "hi"`, "new\nline", "cr\rlf", "tab\t", "\\.", "\\",
	"yes", "No", "null", "~", "true", "123", "1e3", "0x1F", "-", "- item", "key: value", "# comment", "&anchor", "*alias", "!tag", "%dir", "@", "`", "{}", "[]", "'quoted'",
	"\x00nul", "\x01\x1f", "del\x7f", "c1\u0085\u009f", "bom\ufeff", "nonchar\uffff\ufffe", "ls\u2028ps\u2029", "bad\xffutf8\xc3", "surrogate\xed\xa0\x80",
	"emoji 😀", "<tag attr='x'>&amp;</tag>", "]]>", "日本語",
}

// sanitize is what a string reads back as: each byte of invalid UTF-8 is
// U+FFFD.
func sanitize(s string) string { return string([]rune(s)) }

// xmlSanitize is what a string reads back as from XML: characters XML 1.0
// does not allow are U+FFFD too.
func xmlSanitize(s string) string {
	r := []rune(s)
	for i, c := range r {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0xfffe || c == 0xffff {
			r[i] = 0xfffd
		}
	}
	return string(r)
}

func TestStringsRoundTrip(t *testing.T) {
	for _, s := range trickyStrings {
		checkRoundTrip(t, s)
	}
}

// FuzzStringsRoundTrip checks that any string, as a column name and as a
// cell, reads back from every format.
func FuzzStringsRoundTrip(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "s" {
			return // the name of the second column
		}
		checkRoundTrip(t, s)
	})
}

// checkRoundTrip streams a row {s: s, "s": s} in every format and parses it
// back.
func checkRoundTrip(t *testing.T, s string) {
	t.Helper()
	{
		rows := func() *fakeRows { return newRows([]string{s, "s"}, []any{s, s}) }

		var j struct{ Data []map[string]string }
		if err := json.Unmarshal([]byte(stream(t, JSON, rows(), nil)), &j); err != nil {
			t.Errorf("json %q: %v", s, err)
		} else if got := j.Data[0]; len(got) != 2 || got[sanitize(s)] != sanitize(s) || got["s"] != sanitize(s) {
			t.Errorf("json %q reads as %q", s, got)
		}

		recs, err := csv.NewReader(strings.NewReader(stream(t, CSV, rows(), nil))).ReadAll()
		// encoding/csv reads CRLF inside a quoted field as LF.
		c := strings.ReplaceAll(sanitize(s), "\r\n", "\n")
		if want := [][]string{{c, "s"}, {c, c}}; err != nil || !reflect.DeepEqual(recs, want) {
			t.Errorf("csv %q reads as %q, %v", s, recs, err)
		}

		var y struct{ Data []map[string]any }
		if err := yaml.Unmarshal([]byte(stream(t, YAML, rows(), nil)), &y); err != nil {
			t.Errorf("yaml %q: %v", s, err)
		} else if got := y.Data[0]; got[sanitize(s)] != sanitize(s) || got["s"] != sanitize(s) {
			t.Errorf("yaml %q reads as %#v", s, got)
		}

		var x xmlNode
		if err := xml.Unmarshal([]byte(stream(t, XML, rows(), nil)), &x); err != nil {
			t.Errorf("xml %q: %v", s, err)
		} else {
			row := x.Nodes[0].Nodes[0]
			want := "{" + xmlSanitize(s) + "=" + xmlSanitize(s) + " s=" + xmlSanitize(s) + "}"
			if got := row.flat(); got != want {
				t.Errorf("xml %q reads as %q, want %q", s, got, want)
			}
		}

		docs := splitBSON(t, []byte(stream(t, BSON, rows(), nil)))
		var d bson.D
		if err := bson.Unmarshal(docs[0], &d); err != nil {
			t.Errorf("bson %q: %v", s, err)
		} else if want := strings.ReplaceAll(sanitize(s), "\x00", "\ufffd"); len(d) != 2 || d[0].Key != want || d[0].Value != sanitize(s) {
			t.Errorf("bson %q reads as %#v", s, d)
		}
	}
}

func TestYAMLScalars(t *testing.T) {
	rows := newRows([]string{"nan", "inf", "ninf", "whole", "f32", "num", "bad", "yes", "1a", "a-b"},
		[]any{math.NaN(), math.Inf(1), math.Inf(-1), 2.0, float32(0.25), json.Number("1E+2"), json.Number("0x10"), int64(1), int64(2), int64(3)})
	out := stream(t, YAML, rows, nil)
	want := "data:\n  - nan: .nan\n    inf: .inf\n    ninf: -.inf\n    whole: 2.0\n    f32: 0.25\n    num: 1E+2\n    bad: \"0x10\"\n" +
		"    \"yes\": 1\n    \"1a\": 2\n    \"a-b\": 3\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	var got struct{ Data []map[string]any }
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	r := got.Data[0]
	if f, _ := r["nan"].(float64); !math.IsNaN(f) || r["inf"] != math.Inf(1) || r["ninf"] != math.Inf(-1) ||
		r["whole"] != 2.0 || r["f32"] != 0.25 || r["num"] != 100.0 || r["bad"] != "0x10" || r["yes"] != 1 {
		t.Errorf("yaml reads as %#v", r)
	}
}

func TestTextFloats(t *testing.T) {
	rows := func() *fakeRows {
		return newRows([]string{"a", "b", "c", "d"}, []any{math.NaN(), math.Inf(1), math.Inf(-1), float32(1e-7)})
	}
	if got, want := stream(t, CSV, rows(), nil), "a,b,c,d\nNaN,Infinity,-Infinity,1e-7\n"; got != want {
		t.Errorf("csv: got %q, want %q", got, want)
	}
	if got, want := stream(t, JSON, rows(), nil), `{"data":[{"a":"NaN","b":"Infinity","c":"-Infinity","d":1e-7}]}`+"\n"; got != want {
		t.Errorf("json: got %q, want %q", got, want)
	}
	if got := stream(t, XML, rows(), nil); !strings.Contains(got, "<a>NaN</a><b>Infinity</b><c>-Infinity</c><d>1e-7</d>") {
		t.Errorf("xml: got %q", got)
	}
}

func TestXMLNames(t *testing.T) {
	for name, want := range map[string]bool{
		"id": true, "_x": true, "a1": true, "a-b.c": true, "CamelCase": true,
		"": false, "1a": false, "-a": false, ".a": false, "a b": false, "a:b": false, "xml": false, "XmlThing": false,
		"prénom": false, "a<b": false, "column": true,
	} {
		if got := isXMLName(name); got != want {
			t.Errorf("isXMLName(%q) = %v, want %v", name, got, want)
		}
	}
	rows := newRows([]string{"a<b", "xmlns"}, []any{map[string]any{"k k": "v", "ok": nil}, "x"})
	want := `<row><column name="a&lt;b"><column name="k k">v</column><ok null="true"/></column><column name="xmlns">x</column></row>`
	if got := stream(t, XML, rows, nil); !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
}

func TestCSVQuoting(t *testing.T) {
	rows := newRows([]string{"", "a b", " x"}, []any{"", nil, "\\."}, []any{"x\u00a0", " ", "\u00a0lead"})
	want := "\"\",a b,\" x\"\n\"\",,\"\\.\"\nx\u00a0,\" \",\"\u00a0lead\"\n"
	if got := stream(t, CSV, rows, nil); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// encoding/csv agrees on every field we leave unquoted.
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"x\u00a0", "a b"})
	w.Flush()
	if b.String() != "x\u00a0,a b\n" {
		t.Errorf("encoding/csv writes %q", b.String())
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": JSON, "json": JSON, "JSON": JSON, "ndjson": NDJSON, "csv": CSV, "Xml": XML, "yaml": YAML, "bson": BSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"yml", "html", "json "} {
		_, err := ParseFormat(in)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
			t.Fatalf("ParseFormat(%q) error = %v, want a fault.Invalid", in, err)
		}
		if !strings.Contains(fe.Message, "format") || !strings.Contains(fe.Message, "json, ndjson, csv, xml, yaml, bson") {
			t.Errorf("message %q does not name the parameter and the allowed values", fe.Message)
		}
	}
	for f, want := range map[Format]string{
		JSON: "application/json", "": "application/json", NDJSON: "application/x-ndjson", CSV: "text/csv; charset=utf-8",
		XML: "application/xml", YAML: "application/yaml", BSON: "application/bson", "pdf": "application/octet-stream",
	} {
		if got := f.ContentType(); got != want {
			t.Errorf("%q.ContentType() = %q, want %q", f, got, want)
		}
	}
	var b bytes.Buffer
	if _, err := Stream(&b, "pdf", sampleRows(), nil); fault.KindOf(err) != fault.Invalid || b.Len() != 0 {
		t.Errorf("Stream with an unknown format = %v, wrote %q", err, b.String())
	}
}

// recordingWriter records the writes it gets.
type recordingWriter struct {
	writes, max, total int
	last               []byte
	err                error
	failAt             int // fail the failAt-th write (1-based) when err is set
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.err != nil && w.writes == w.failAt {
		return 0, w.err
	}
	w.max = max(w.max, len(p))
	w.total += len(p)
	w.last = append(w.last[:0], p...)
	return len(p), nil
}

var hotRow2 = []any{int64(2), "日本語 <&> 'single' \u2028", "", json.Number("-0.5"),
	int64(-9007199254740993), 1e-7, false, created2, json.RawMessage(`[]`), []any{}, []byte{}, " lead"}

// hotRows cycles through rows of every cell type but objects, whose keys
// must be sorted (an allocation per object).
func hotRows(n int) *fakeRows {
	r := newRows(sampleCols, sampleRow1, hotRow2, sampleRow3)
	r.n = n
	return r
}

func TestStreamingMemory(t *testing.T) {
	const rows = 200_000
	for _, f := range []Format{JSON, NDJSON, CSV, XML, YAML, BSON} {
		t.Run(string(f), func(t *testing.T) {
			var w recordingWriter
			n, err := Stream(&w, f, hotRows(rows), samplePage)
			if err != nil || n != rows {
				t.Fatalf("Stream = %d, %v", n, err)
			}
			// Output is handed over in chunks of about 32 KiB: the buffer
			// never holds more than the threshold plus one row.
			if w.max > flushAt+1024 || w.writes < w.total/(flushAt+1024) {
				t.Errorf("%d writes of at most %d bytes for %d bytes", w.writes, w.max, w.total)
			}

			allocs := testing.AllocsPerRun(2, func() {
				if _, err := Stream(io.Discard, f, hotRows(rows), samplePage); err != nil {
					t.Fatal(err)
				}
			})
			// Setup allocates a few column keys; rows allocate nothing.
			if perRow := allocs / rows; perRow > 0.001 {
				t.Errorf("%.0f allocations for %d rows (%.4f per row)", allocs, rows, perRow)
			}
			t.Logf("%s: %d bytes in %d writes (max %d), %.0f allocs per %d rows", f, w.total, w.writes, w.max, allocs, rows)
		})
	}
}

func TestErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, f := range []Format{JSON, NDJSON, CSV, XML, YAML, BSON} {
		// An error before the first flush: nothing is written, so the caller
		// can still answer with an error status.
		r := hotRows(10)
		r.valErr, r.errAt = boom, 5
		var w recordingWriter
		if n, err := Stream(&w, f, r, samplePage); !errors.Is(err, boom) || n != 5 || w.writes != 0 {
			t.Errorf("%s: Values error: n=%d err=%v writes=%d", f, n, err, w.writes)
		}
		r = hotRows(10)
		r.err = boom
		w = recordingWriter{}
		if n, err := Stream(&w, f, r, samplePage); !errors.Is(err, boom) || n != 10 || w.writes != 0 {
			t.Errorf("%s: Err error: n=%d err=%v writes=%d", f, n, err, w.writes)
		}

		// An error after output started: what was written ends on a row
		// boundary and lacks the closing envelope.
		r = hotRows(5000)
		r.valErr, r.errAt = boom, 4000
		w = recordingWriter{}
		if n, err := Stream(&w, f, r, samplePage); !errors.Is(err, boom) || n != 4000 || w.writes == 0 {
			t.Errorf("%s: late Values error: n=%d err=%v writes=%d", f, n, err, w.writes)
		}
		switch f {
		case JSON:
			if !bytes.HasSuffix(w.last, []byte("}")) || bytes.HasSuffix(w.last, []byte("]}\n")) || bytes.Contains(w.last, []byte(`"page"`)) {
				t.Errorf("json after an error ends %q", w.last[max(0, len(w.last)-40):])
			}
		case XML:
			if !bytes.HasSuffix(w.last, []byte("</row>")) {
				t.Errorf("xml after an error ends %q", w.last[max(0, len(w.last)-40):])
			}
		case NDJSON, CSV, YAML:
			if !bytes.HasSuffix(w.last, []byte("\n")) {
				t.Errorf("%s after an error ends %q", f, w.last[max(0, len(w.last)-40):])
			}
		}

		// A writer error stops the stream.
		w = recordingWriter{err: boom, failAt: 2}
		if _, err := Stream(&w, f, hotRows(5000), samplePage); !errors.Is(err, boom) || w.writes != 2 {
			t.Errorf("%s: writer error: err=%v writes=%d", f, err, w.writes)
		}
	}

	// A row of the wrong width is the dialect's bug.
	r := newRows([]string{"a", "b"}, []any{int64(1)})
	if _, err := Stream(io.Discard, JSON, r, nil); fault.KindOf(err) != fault.Internal || err == nil {
		t.Errorf("short row: %v", err)
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		if _, err := Stream(&b, JSON, newRows([]string{"s"}, []any{s}), nil); err != nil {
			t.Fatal(err)
		}
		var got struct{ Data []struct{ S string } }
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%q: output %q does not parse: %v", s, b.String(), err)
		}
		if len(got.Data) != 1 || got.Data[0].S != sanitize(s) {
			t.Fatalf("%q reads back as %+v, want %q", s, got.Data, sanitize(s))
		}
		// Byte for byte what encoding/json writes without HTML escaping.
		var std bytes.Buffer
		enc := json.NewEncoder(&std)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if want := bytes.TrimSuffix(std.Bytes(), []byte("\n")); !bytes.Equal(appendQuoted(nil, s, false), want) {
			t.Fatalf("%q: got %q, encoding/json writes %q", s, appendQuoted(nil, s, false), want)
		}
	})
}

func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5e-3, true, false, null, "x\u00e9\n"]}`, `[]`, `{}`, `"\u2028\xff"`, `[1,]`, `01`, `-`, `1.e5`, `{"a":1 "b":2}`, "[\"\t\"]", ` 7 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := appendCompactJSON([]byte("x"), raw)
		if ok != json.Valid(raw) {
			t.Fatalf("%q: ok = %v, json.Valid says %v", raw, ok, !ok)
		}
		if !ok {
			if string(got) != "x" {
				t.Fatalf("%q: invalid input left %q", raw, got)
			}
			return
		}
		got = got[1:]
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Fatalf("%q compacts to invalid %q", raw, got)
		}
		if utf8.Valid(raw) {
			var std bytes.Buffer
			if err := json.Compact(&std, raw); err != nil || !bytes.Equal(got, std.Bytes()) {
				t.Fatalf("%q: got %q, json.Compact gives %q, %v", raw, got, std.Bytes(), err)
			}
		}
		decode := func(b []byte) (v any, err error) {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			err = d.Decode(&v)
			return v, err
		}
		a, errA := decode(raw)
		b, errB := decode(got)
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q and %q decode differently: %#v, %#v", raw, got, a, b)
		}
	})
}

// benchRows is a typical 100-row page: keys, text, an exact decimal, a
// float, a flag, a timestamp and a nullable note.
func benchRows() *fakeRows {
	names := []string{"id", "name", "email", "amount", "score", "active", "created_at", "note"}
	data := make([][]any, 100)
	for i := range data {
		var note any
		if i%3 != 0 {
			note = fmt.Sprintf("note %d: \"quoted\", with comma\nand newline", i)
		}
		data[i] = []any{int64(100000 + i), fmt.Sprintf("Customer Nº %d", i), fmt.Sprintf("user%d@example.com", i),
			json.Number(fmt.Sprintf("%d.%02d", i*37, i%100)), float64(i) / 7, i%2 == 0,
			time.Date(2024, 5, 6, 7, 8, 9, i*1000, time.UTC), note}
	}
	return newRows(names, data...)
}

func benchStream(b *testing.B, f Format) {
	r := benchRows()
	page := &Page{Number: 0, Size: 100}
	b.ReportAllocs()
	for b.Loop() {
		r.i = 0
		if _, err := Stream(io.Discard, f, r, page); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSON1Row is the answer of a read by key: one row of a page.
func BenchmarkJSON1Row(b *testing.B) {
	r := benchRows()
	r.n = 1
	page := &Page{Number: 0, Size: 1}
	b.ReportAllocs()
	for b.Loop() {
		r.i = 0
		if _, err := Stream(io.Discard, JSON, r, page); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSON100Rows(b *testing.B)   { benchStream(b, JSON) }
func BenchmarkCSV100Rows(b *testing.B)    { benchStream(b, CSV) }
func BenchmarkNDJSON100Rows(b *testing.B) { benchStream(b, NDJSON) }
func BenchmarkXML100Rows(b *testing.B)    { benchStream(b, XML) }
func BenchmarkYAML100Rows(b *testing.B)   { benchStream(b, YAML) }
func BenchmarkBSON100Rows(b *testing.B)   { benchStream(b, BSON) }

// BenchmarkBaselineEncodingJSON100Rows is the handler Stream replaces: each
// row read into a map, the page encoded by encoding/json.
func BenchmarkBaselineEncodingJSON100Rows(b *testing.B) {
	r := benchRows()
	b.ReportAllocs()
	for b.Loop() {
		r.i = 0
		cols := r.Columns()
		var data []map[string]any
		for r.Next() {
			vals, _ := r.Values()
			m := make(map[string]any, len(cols))
			for i, c := range cols {
				m[c.Name] = vals[i]
			}
			data = append(data, m)
		}
		if err := json.NewEncoder(io.Discard).Encode(map[string]any{"data": data, "page": map[string]int64{"number": 0, "size": 100}}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestYAMLLongKeys(t *testing.T) {
	long := strings.Repeat("k", 1500)
	rows := newRows([]string{long, "b", long + "2"}, []any{int64(1), map[string]any{long: int64(2), "x": nil}, int64(3)})
	out := stream(t, YAML, rows, nil)
	want := "data:\n  - ? " + long + "\n    : 1\n    b: {? \"" + long + "\" : 2, \"x\": null}\n    ? " + long + "2\n    : 3\n"
	if out != want {
		t.Fatalf("got\n%.300q\nwant\n%.300q", out, want)
	}
	var got struct{ Data []map[string]any }
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if r := got.Data[0]; r[long] != 1 || !reflect.DeepEqual(r["b"], map[string]any{long: 2, "x": nil}) || r[long+"2"] != 3 {
		t.Errorf("yaml reads as %.300v", r)
	}
}
