package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzWriteString: writeString escapes every string (and its bytes) exactly as
// encoding/json does, so the direct road answers mcp-go's bytes.
func FuzzWriteString(f *testing.F) {
	for _, s := range []string{"", "plain", `"q" \ / <b>&</b>`, "\x00\x01\b\f\n\r\t\x1f\x7f", "é ü 日本 😀", "\u2028\u2029", "\xff\xfe bad \xc3", "a\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		writeString(&buf, s)
		want, _ := json.Marshal(s)
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("writeString(%q) = %s, want %s", s, buf.Bytes(), want)
		}
		buf.Reset()
		writeString(&buf, []byte(s))
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("writeString([]byte(%q)) = %s, want %s", s, buf.Bytes(), want)
		}
	})
}

// TestNeedsHTMLEscape: raw structured content is escaped only when it holds
// a character encoding/json escapes, and then exactly as it would.
func TestNeedsHTMLEscape(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{{`{"a":"b"}`, false}, {`{"a":"<"}`, true}, {`{"a":"&"}`, true}, {`{"a":">"}`, true}, {"{\"a\":\"\u2028\"}", true}, {`{"a":"é"}`, false}} {
		if got := needsHTMLEscape([]byte(c.raw)); got != c.want {
			t.Errorf("needsHTMLEscape(%s) = %v", c.raw, got)
		}
	}
}
