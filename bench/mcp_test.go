package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCheckTextBlock: the full check of a page's answer passes a
// well-formed one in every era's shape and refuses each way one can be
// wrong.
func TestCheckTextBlock(t *testing.T) {
	const page = `{"data":[{"id":1,"name":"a \"b\" <c>"}],"page":{"number":0,"size":1}}`
	text := `"{\"data\":[{\"id\":1,\"name\":\"a \\\"b\\\" \u003cc\u003e\"}],\"page\":{\"number\":0,\"size\":1}}"`
	legacy := []byte(`,"isError":false,"structuredContent":`)
	modern := []byte(`,"resultType":"complete","structuredContent":`)
	modernTail := `,"isError":false` + string(modern)
	msg := func(head, text, tail, structured string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":7,"result":{` + head + `"content":[{"type":"text","text":` + text + `}]` + tail + structured + `}}`)
	}
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"minimal","version":"dev"}},`
	for _, c := range []struct {
		name string
		b    []byte
		tail []byte
		ok   bool
	}{
		{"2025-06-18", msg("", text, string(legacy), page), legacy, true},
		{"2026-07-28", msg(meta, text, modernTail, page), modern, true},
		{"same value, other bytes", msg("", strings.Replace(text, `\u003c`, "<", 1), string(legacy), strings.Replace(page, `"id":1`, `"id":1.0`, 1)), legacy, false},
		{"text differs", msg("", strings.Replace(text, "number", "numbers", 1), string(legacy), page), legacy, false},
		{"text not a string", msg("", `{"a":1}`, string(legacy), page), legacy, false},
		{"bad escape", msg("", strings.Replace(text, `\"id`, `\qid`, 1), string(legacy), page), legacy, false},
		{"malformed head", msg(`"_meta":{"x":},`, text, modernTail, page), modern, false},
		{"2026-07-28, another member", msg(meta, text, `,"isError":false,"x":1`+string(modern), page), modern, false},
		{"two blocks", []byte(strings.Replace(string(msg("", text, string(legacy), page)), `}]`, `},{"type":"text","text":"x"}]`, 1)), legacy, false},
	} {
		i := structuredAt(c.b, c.tail)
		if i < 0 {
			t.Fatalf("%s: no tail", c.name)
		}
		err := checkTextBlock(c.b, i, c.b[i+len(c.tail):len(c.b)-2])
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v\n%s", c.name, err, c.ok, c.b)
		}
	}
	// The text equal to the page as a JSON value but not byte for byte
	// passes: the gateway may escape < where structuredContent does not.
	b := msg("", text, string(legacy), page)
	i := structuredAt(b, legacy)
	if err := checkTextBlock(b, i, bytes.Replace(b[i+len(legacy):len(b)-2], []byte(`<c>`), []byte(`\u003cc\u003e`), 1)); err != nil {
		t.Errorf("same JSON value refused: %v", err)
	}
}
