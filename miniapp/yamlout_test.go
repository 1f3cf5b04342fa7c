package miniapp

import (
	"encoding/json"
	"testing"
)

// TestUpstreamYAMLGolden pins the bytes serde_yaml_bw 2.5 (libyaml's
// emitter) writes for JSON values; each case names the rule it follows.
func TestUpstreamYAMLGolden(t *testing.T) {
	cases := []struct {
		name string
		in   string // a JSON document
		want string
	}{
		// serde_json maps are BTreeMaps: keys come out sorted bytewise.
		{"keys sorted", `{"b":1,"a":2,"B":3}`, "B: 3\na: 2\nb: 1\n"},
		// A block sequence in a mapping is not indented (libyaml's
		// indentless sequence in a mapping context).
		{"sequence in mapping", `{"tags":["a","b"]}`, "tags:\n- a\n- b\n"},
		// A mapping in a sequence starts on the dash's line, its keys
		// indented two.
		{"mapping in sequence", `{"l":[{"x":1,"y":2}]}`, "l:\n- x: 1\n  y: 2\n"},
		// A sequence in a sequence is indented two and starts inline.
		{"sequence in sequence", `{"l":[["a","b"],"c"]}`, "l:\n- - a\n  - b\n- c\n"},
		// A mapping in a mapping is indented two on the next line.
		{"mapping in mapping", `{"o":{"k":"v","n":{"m":true}}}`, "o:\n  k: v\n  n:\n    m: true\n"},
		// Empty collections are written in flow style.
		{"empty collections", `{"a":[],"o":{}}`, "a: []\no: {}\n"},
		{"empty root mapping", `{}`, "{}\n"},
		{"empty collection in sequence", `{"l":[[],{}]}`, "l:\n- []\n- {}\n"},
		// null and bools are plain.
		{"null and bools", `{"n":null,"t":true,"f":false}`, "f: false\nn: null\nt: true\n"},
		// Strings that read back as null, bool, int or float are single
		// quoted (serde_yaml's InferScalarStyle), true/false in any case.
		{"string null words", `{"a":"null","b":"~","c":"Null","d":""}`, "a: 'null'\nb: '~'\nc: 'Null'\nd: ''\n"},
		{"string bools", `{"a":"true","b":"False","c":"tRuE"}`, "a: 'true'\nb: 'False'\nc: 'tRuE'\n"},
		{"string numbers", `{"a":"5","b":"-3","c":"1.5","d":"1e3","e":"0x1F","f":"0o17","g":"0b101","h":"+7",".":".inf","i":"-.Inf","j":".NaN"}`,
			".: '.inf'\na: '5'\nb: '-3'\nc: '1.5'\nd: '1e3'\ne: '0x1F'\nf: '0o17'\ng: '0b101'\nh: '+7'\ni: '-.Inf'\nj: '.NaN'\n"},
		// A leading zero followed by digits is a string in YAML 1.2, and
		// serde_yaml still quotes it.
		{"leading zero digits", `{"a":"007","b":"-012"}`, "a: '007'\nb: '-012'\n"},
		// YAML 1.1 words are not quoted: serde_yaml resolves only 1.2 core.
		{"yaml 1.1 words plain", `{"a":"yes","b":"no","c":"on","d":"off","e":"y"}`, "a: yes\nb: no\nc: on\nd: off\ne: y\n"},
		// Words Rust's float parser refuses, or that overflow, stay plain.
		{"non-floats plain", `{"a":"inf","b":"NaN","c":"1e400","d":"1_000","e":"0x"}`, "a: inf\nb: NaN\nc: 1e400\nd: 1_000\ne: 0x\n"},
		// Indicators: a leading indicator, ": " or " #" force single quotes.
		{"indicators", `{"a":"- x","b":"a: b","c":"x #y","d":"*star","e":"&amp","f":"!bang","g":"%p","h":"@at","i":"` + "`" + `tick","j":"[x","k":"{x","l":"|x",">":">x"}`,
			"'>': '>x'\na: '- x'\nb: 'a: b'\nc: 'x #y'\nd: '*star'\ne: '&amp'\nf: '!bang'\ng: '%p'\nh: '@at'\ni: '`tick'\nj: '[x'\nk: '{x'\nl: '|x'\n"},
		// Flow indicators inside a block scalar are fine plain.
		{"flow indicators inside plain", `{"a":"x, y","b":"a[0]","c":"a:b","d":"a#b","e":"-x","f":"?x"}`, "a: x, y\nb: a[0]\nc: a:b\nd: a#b\ne: -x\nf: ?x\n"},
		// A trailing colon is followed by the end (whitespace): quoted.
		{"trailing colon", `{"a":"key:","b":"?","c":"-",":":"x"}`, "':': x\na: 'key:'\nb: '?'\nc: '-'\n"},
		// "---" and "..." at the start are document markers.
		{"document markers", `{"a":"---x","b":"...y"}`, "a: '---x'\nb: '...y'\n"},
		// Leading or trailing spaces need quotes.
		{"edge spaces", `{"a":" x","b":"x ","c":" "}`, "a: ' x'\nb: 'x '\nc: ' '\n"},
		// A single quote inside single quotes is doubled.
		{"quote doubling", `{"a":"'x'","b":"it's"}`, "a: '''x'''\nb: it's\n"},
		// Double quotes are plain unless leading.
		{"double quote", `{"a":"\"x\"","b":"say \"hi\""}`, "a: '\"x\"'\nb: say \"hi\"\n"},
		// Tabs, CR, control characters and characters beyond the BMP are
		// not printable to libyaml: double quotes with escapes.
		{"tab", `{"a":"x\ty"}`, "a: \"x\\ty\"\n"},
		{"carriage return", `{"a":"x\ry"}`, "a: \"x\\ry\"\n"},
		{"control", `{"a":"\u0001\u007f\u0085"}`, "a: \"\\x01\\x7F\\N\"\n"},
		{"emoji", `{"a":"hi 😀"}`, "a: \"hi \\U0001F600\"\n"},
		{"bom", `{"a":"\ufeffx"}`, "a: \"\\uFEFFx\"\n"},
		// Other non-ASCII text is written as it is (unicode output).
		{"unicode plain", `{"a":"日本語","b":"café"}`, "a: 日本語\nb: café\n"},
		// A backslash is plain.
		{"backslash", `{"a":"C:\\dir"}`, "a: C:\\dir\n"},
		// Multi-line strings are literal blocks: "|-" without a final
		// newline, "|" with exactly one, "|+" with more (then the document
		// ends with "...").
		{"literal strip", `{"a":"x\ny","b":1}`, "a: |-\n  x\n  y\nb: 1\n"},
		{"literal clip", `{"a":"x\ny\n","b":1}`, "a: |\n  x\n  y\nb: 1\n"},
		{"literal keep", `{"a":"x\n\n","b":1}`, "a: |+\n  x\n\nb: 1\n...\n"},
		{"literal keep only newline", `{"a":"\n"}`, "a: |2+\n\n...\n"},
		// A literal whose last block scalar is not "|+" resets open-ended.
		{"keep then strip", `{"a":"x\n\n","b":"y\nz"}`, "a: |+\n  x\n\nb: |-\n  y\n  z\n"},
		// Empty lines inside a literal are not indented.
		{"literal blank line", `{"a":"x\n\ny"}`, "a: |-\n  x\n\n  y\n"},
		// A leading space or newline adds the indentation indicator.
		{"literal leading space", `{"a":"  x\ny"}`, "a: |2-\n    x\n  y\n"},
		{"literal leading newline", `{"a":"\nx"}`, "a: |2-\n\n  x\n"},
		// A literal inside a sequence is indented from the dash.
		{"literal in sequence", `{"l":["a\nb"]}`, "l:\n- |-\n  a\n  b\n"},
		// Tabs or a space before a newline forbid the block: double quotes.
		{"multiline with tab", `{"a":"x\n\ty"}`, "a: \"x\\n\\ty\"\n"},
		{"multiline space break", `{"a":"x \ny"}`, "a: \"x \\ny\"\n"},
		// A trailing space forbids the literal block too.
		{"multiline trailing space", `{"a":"x\ny "}`, "a: \"x\\ny \"\n"},
		// Integers are written as they are; -0 is the float -0.0.
		{"integers", `{"a":0,"b":-7,"c":18446744073709551615,"d":-9223372036854775808,"e":-0}`, "a: 0\nb: -7\nc: 18446744073709551615\nd: -9223372036854775808\ne: -0.0\n"},
		// Integers beyond u64 are floats.
		{"big integer", `{"a":123456789012345678901234}`, "a: 1.2345678901234569e+23\n"},
		// Floats: shortest form laid out as ryu does (plain between 1e-5 and
		// 1e16), ".0" added, exponent with a sign.
		{"floats", `{"a":5.0,"b":1.5,"c":1e20,"d":1e16,"e":1e15,"f":0.0001,"g":0.00001,"h":1e-7,"i":-2.5e-10,"j":0.1,"k":1.7976931348623157e308}`,
			"a: 5.0\nb: 1.5\nc: 1.0e+20\nd: 1.0e+16\ne: 1000000000000000.0\nf: 0.0001\ng: 0.00001\nh: 1.0e-7\ni: -2.5e-10\nj: 0.1\nk: 1.7976931348623157e+308\n"},
		{"float zero", `{"a":0.0,"b":-0.0}`, "a: 0.0\nb: -0.0\n"},
		// An empty key is quoted.
		{"empty key", `{"":1}`, "'': 1\n"},
		// A key with a newline is not a simple key: "? " form.
		{"multiline key", `{"a\nb":1}`, "? |-\n  a\n  b\n: 1\n"},
		// A key longer than 128 bytes is not a simple key either.
		{"long key", `{"` + long129 + `":1}`, "? " + long129 + "\n: 1\n"},
		// Root sequence.
		{"root sequence", `[1,"a"]`, "- 1\n- a\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := upstreamYAML(json.RawMessage(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

var long129 = func() string {
	b := make([]byte, 129)
	for i := range b {
		b[i] = 'k'
	}
	return string(b)
}()

// TestUpstreamYAMLOrdered: struct fields keep their order (schema.yaml).
func TestUpstreamYAMLOrdered(t *testing.T) {
	got, err := upstreamYAML(orderedMap{{"table", "t"}, {"title", nil}, {"fields", []any{}}, {"history", "full"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "table: t\ntitle: null\nfields: []\nhistory: full\n"; string(got) != want {
		t.Errorf("got %q want %q", got, want)
	}
}
