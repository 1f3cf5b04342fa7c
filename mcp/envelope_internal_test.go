package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// envelopeSeeds are request bodies of every shape the direct road sees,
// and the ones it must decline.
var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"page_number":3,"page_size":100,"query":{"oy":"id.as"},"schema":"s","table":"t","type":"pg"},"name":"auto_read_rows"}}`,
	` { "jsonrpc" : "2.0" , "id" : "a\"b" , "method" : "tools/list" , "params" : { "cursor" : null } } `,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"help","arguments":null,"task":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
	`{"jsonrpc":"2.0","ID":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call"}`,
	`{"jsonrpc":2,"id":1,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`,
	`{"jsonrpc":"2.0","id":[1,{"a":"}"}],"method":"x","extra":{"b":[true,false,null,-1.5e3]}}`,
	`[{"jsonrpc":"2.0"}]`, `"x"`, `null`, `{}`, `{"a":{"b":{"c":[[[]]]}}}`,
}

// FuzzReadEnvelope: a body readEnvelope reads, it reads as encoding/json
// reads it into the struct the direct road decoded before: the same
// strings and the same raw values.
func FuzzReadEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		e, ok := readEnvelope([]byte(body))
		if !ok {
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				Meta      json.RawMessage `json:"_meta"`
				Task      json.RawMessage `json:"task"`
				Cursor    json.RawMessage `json:"cursor"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil {
			t.Fatalf("readEnvelope read %s, encoding/json refuses it: %v", body, err)
		}
		p := msg.Params
		got := []any{e.jsonrpc, e.method, e.name, e.id, e.arguments, e.meta, e.task, e.cursor}
		want := []any{msg.JSONRPC, msg.Method, p.Name, []byte(msg.ID), []byte(p.Arguments), []byte(p.Meta), []byte(p.Task), []byte(p.Cursor)}
		for i := range got {
			g, w := got[i], want[i]
			if gb, ok := g.([]byte); ok {
				if (gb == nil) != (w.([]byte) == nil) || !bytes.Equal(gb, w.([]byte)) {
					t.Fatalf("%s: member %d = %q, encoding/json %q", body, i, gb, w)
				}
			} else if g != w {
				t.Fatalf("%s: member %d = %q, encoding/json %q", body, i, g, w)
			}
		}
	})
}

// TestReadEnvelopeDeclines: what encoding/json could read otherwise than
// readEnvelope — a key in another case, a key twice, an escape — is
// declined (mcp-go's road answers it).
func TestReadEnvelopeDeclines(t *testing.T) {
	for _, body := range envelopeSeeds[5:14] {
		if _, ok := readEnvelope([]byte(body)); ok {
			t.Errorf("read %s", body)
		}
	}
	for _, body := range envelopeSeeds[:5] {
		if _, ok := readEnvelope([]byte(body)); !ok {
			t.Errorf("declined %s", body)
		}
	}
}

// FuzzDecodeValue: decodeValue gives what encoding/json's Decoder with
// UseNumber gives, for every valid JSON text.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range append(envelopeSeeds, `{"a":1,"a":2}`, `"\u00e9\ud83d\ude00\ud800 \xff\xfe"`, `[0,-0.5e+10,1E400,123456789012345678901234567890]`,
		"{\"k\\\"ey\":\"v\\u2028\",\"\xe9\":[]}", ` [ 1 , { } , [ ] , "" ] `, `true`, `false`, `null`, `-1`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := decodeValue([]byte(s)); !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeValue(%q) = %#v, want %#v", s, got, want)
		}
	})
}

// TestMetaOf: metaOf reads _meta as mcp-go does, and keeps what it read.
func TestMetaOf(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want metaInfo
	}{
		{"", metaInfo{ok: true}},
		{"null", metaInfo{ok: true}},
		{`{}`, metaInfo{ok: true}},
		{`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`, metaInfo{ok: true, version: "2026-07-28", caps: true}},
		{`{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":null}`, metaInfo{ok: true}},
		{`{"io.modelcontextprotocol/clientCapabilities":"x"}`, metaInfo{ok: true}},
		{`{"io.modelcontextprotocol/clientCapabilities":{"sampling":5}}`, metaInfo{ok: true}},
		{`[1]`, metaInfo{}},
		{`{"a":1e400}`, metaInfo{}},
	} {
		var raw []byte
		if c.raw != "" {
			raw = []byte(c.raw)
		}
		for range 2 { // read, then kept
			if got := metaOf(raw); got != c.want {
				t.Errorf("metaOf(%s) = %+v, want %+v", c.raw, got, c.want)
			}
		}
		var m *mcpgo.Meta
		err := json.Unmarshal(raw, &m)
		if c.raw != "" && (err == nil) != c.want.ok || err == nil && (m.ProtocolVersion() != c.want.version || (m.ClientCapabilities() != nil) != c.want.caps) {
			t.Errorf("%s: mcp-go reads it otherwise: %v %+v", c.raw, err, m)
		}
	}
}

// BenchmarkDecodeCall decodes a tools/call of auto_read_rows as the
// direct road does: the envelope, _meta, the arguments.
func BenchmarkDecodeCall(b *testing.B) {
	body := []byte(envelopeSeeds[0])
	params := lookup(catalog, "auto_read_rows").params
	for b.Loop() {
		if !json.Valid(body) {
			b.Fatal("invalid")
		}
		e, ok := readEnvelope(body)
		if m := metaOf(e.meta); !ok || !m.caps {
			b.Fatal("declined")
		}
		req := mcpgo.CallToolRequest{}
		req.Params.RawArguments = json.RawMessage(e.arguments)
		if _, err := decodeArgs("auto_read_rows", params, rawArguments(req)); err != nil {
			b.Fatal(err)
		}
	}
}
