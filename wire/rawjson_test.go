package wire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// rawCell streams one row whose one column "v" is the JSON value raw.
func rawCell(t *testing.T, f Format, raw string) string {
	t.Helper()
	return stream(t, f, newRows([]string{"v"}, []any{json.RawMessage(raw)}), nil)
}

// normalize makes a decoded JSON or YAML value comparable: every number a
// float64.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}

// yamlCell is the value of column v of the YAML document of raw.
func yamlCell(t *testing.T, raw string) (any, string, error) {
	t.Helper()
	out := rawCell(t, YAML, raw)
	var doc struct {
		Data []map[string]any `yaml:"data"`
	}
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		return nil, out, err
	}
	if len(doc.Data) != 1 {
		return nil, out, fmt.Errorf("%d rows", len(doc.Data))
	}
	return normalize(doc.Data[0]["v"]), out, nil
}

// TestJSONValuesInEveryFormat: a json/jsonb value is written by YAML as a
// one-line flow collection and by XML as elements — the way each writes
// arrays and objects — compact whatever the database's spacing, and JSON
// and CSV hold its compact text; YAML reads back as the JSON value.
func TestJSONValuesInEveryFormat(t *testing.T) {
	long := strings.Repeat("k", 1100)
	tests := []struct {
		raw       string
		yaml, xml string // the cell as written
	}{
		{"{\"a\" :\t[ 1 , 2 ],\n \"b\": \"x y\"}", `{"a": [1, 2], "b": "x y"}`, `<a><item>1</item><item>2</item></a><b>x y</b>`},
		{` [ ] `, `[]`, ``},
		{`{}`, `{}`, ``},
		{`{"z":1,"a":2}`, `{"z": 1, "a": 2}`, `<z>1</z><a>2</a>`}, // the database's order
		{`[null, true, false, -0.5e+3, 12345678901234567890]`, `[null, true, false, -0.5e+3, 12345678901234567890]`,
			`<item null="true"/><item>true</item><item>false</item><item>-0.5e+3</item><item>12345678901234567890</item>`},
		{`{"n": null, "odd key": "<&>", "xmlish": 1, "é": "\u00e9\/\"\\\n\t"}`,
			`{"n": null, "odd key": "<&>", "xmlish": 1, "é": "é/\"\\\n\t"}`,
			`<n null="true"/><column name="odd key">&lt;&amp;&gt;</column><column name="xmlish">1</column><column name="é">é/&#34;\&#xA;&#x9;</column>`},
		{`"\ud83d\ude00 \u2028 \u0085 \ud800 \u007f"`, `"😀 \u2028 \u0085 � \u007f"`, "😀 \u2028 \u0085 � \u007f"},
		{`3`, `3`, `3`},
		{`"plain"`, `"plain"`, `plain`},
		{`{"` + long + `": [1]}`, `{? "` + long + `" : [1]}`, `<` + long + `><item>1</item></` + long + `>`},
		{`[[[]]]`, `[[[]]]`, `<item><item></item></item>`},
	}
	for _, tt := range tests {
		y := rawCell(t, YAML, tt.raw)
		if want := "data:\n  - v: " + tt.yaml + "\n"; y != want {
			t.Errorf("yaml of %.60q:\n%q\nwant\n%q", tt.raw, y, want)
		}
		got, _, err := yamlCell(t, tt.raw)
		var want any
		_ = json.Unmarshal([]byte(tt.raw), &want)
		if err != nil || !reflect.DeepEqual(got, normalize(want)) {
			t.Errorf("yaml of %.60q reads as %#v (%v), want %#v", tt.raw, got, err, want)
		}
		x := rawCell(t, XML, tt.raw)
		if want := `<row><v>` + tt.xml + `</v></row>`; !strings.Contains(x, want) {
			t.Errorf("xml of %.60q:\n%s\nwant %s", tt.raw, x, want)
		}
		if err := xml.Unmarshal([]byte(x), new(xmlNode)); err != nil {
			t.Errorf("xml of %.60q does not parse: %v", tt.raw, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(tt.raw)); err != nil {
			t.Fatal(err)
		}
		if j := rawCell(t, JSON, tt.raw); !strings.Contains(j, `"v":`+compact.String()) {
			t.Errorf("json of %.60q: %s", tt.raw, j)
		}
	}

	// JSON null is null, as SQL NULL; text that is not JSON is a string.
	if x := rawCell(t, XML, " null "); !strings.Contains(x, `<row><v null="true"/></row>`) {
		t.Errorf("xml of null: %s", x)
	}
	if y := rawCell(t, YAML, "null"); y != "data:\n  - v: null\n" {
		t.Errorf("yaml of null: %q", y)
	}
	if y := rawCell(t, YAML, "{bad"); y != "data:\n  - v: \"{bad\"\n" {
		t.Errorf("yaml of invalid JSON: %q", y)
	}
	if x := rawCell(t, XML, "{bad <"); !strings.Contains(x, "<v>{bad &lt;</v>") {
		t.Errorf("xml of invalid JSON: %s", x)
	}
	// Past maxDepth nesting is cut, as for arrays.
	deep := strings.Repeat("[", maxDepth+5) + strings.Repeat("]", maxDepth+5)
	if y := rawCell(t, YAML, deep); !strings.Contains(y, strings.Repeat("[", maxDepth)+"null"+strings.Repeat("]", maxDepth)) {
		t.Errorf("deep yaml: %.100q", y)
	}
	if x := rawCell(t, XML, deep); xml.Unmarshal([]byte(x), new(xmlNode)) != nil {
		t.Errorf("deep xml does not parse")
	}
}

// FuzzRawJSON: any valid JSON value is written as YAML that reads back as
// the same value (a repeated object key aside: YAML refuses it) and as
// well-formed XML; anything else as a string; nothing panics.
func FuzzRawJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2],"b":"x y"}`, `[null,true,{"":{}}]`, `"\u0000\ud83d\ude00\\"`, `-1.5e-300`, `{bad`, `{"a":1,"a":2}`, `"\ufeff\u009f\uffff"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		x := rawCell(t, XML, raw)
		if err := xml.Unmarshal([]byte(x), new(xmlNode)); err != nil {
			t.Fatalf("xml of %q does not parse: %v\n%s", raw, err, x)
		}
		got, out, err := yamlCell(t, raw)
		if !json.Valid([]byte(raw)) {
			if _, isString := got.(string); err != nil || !isString {
				t.Fatalf("yaml of invalid JSON %q reads as %#v (%v)", raw, got, err)
			}
			return
		}
		if err != nil && strings.Contains(err.Error(), "already defined") {
			return // a repeated key: valid JSON, not YAML
		}
		var want any
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if err != nil || !reflect.DeepEqual(got, normalize(want)) {
			t.Fatalf("yaml of %q reads as %#v (%v), want %#v\n%s", raw, got, err, want, out)
		}
	})
}
