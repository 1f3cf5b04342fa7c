package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// TestWriteStringEveryByte: every byte value, alone and at every offset of
// a word (the eight-byte loop and the tail both see it), at the ends of
// runs of plain bytes and next to other specials, is escaped as
// encoding/json escapes it; so are the runes that are special (U+2028,
// U+2029), cut runes, invalid UTF-8, and multi-byte runes across word
// boundaries.
func TestWriteStringEveryByte(t *testing.T) {
	var cases []string
	for c := range 256 {
		b := string([]byte{byte(c)})
		for pad := range 17 {
			p := strings.Repeat("a", pad)
			cases = append(cases, p+b, b+p, p+b+p, p+b+b+"\""+p, p+"é"+b+"<", b+"\u2028"+p)
		}
	}
	for _, r := range []string{"\u2028", "\u2029", "\u2027", "\u202a", "é", "日本", "😀", "\ufffd", "\u0085", "\ufeff", "\uffff"} {
		for pad := range 17 {
			p := strings.Repeat("x", pad)
			cases = append(cases, p+r, p+r+p, p+r[:len(r)-1], p+r[:1]+p, p+r[1:]+p)
		}
	}
	cases = append(cases, "", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x80", "\xe2\x80\xa8\xe2\x80\xa9",
		`{"data":[{"id":1,"name":"a <b> & c","note":"line\n\"q\"\\"}],"page":{"number":0,"size":1}}`)
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.WriteString("prefix")
		writeString(&buf, s)
		if got := buf.Bytes()[len("prefix"):]; !bytes.Equal(got, want) {
			t.Errorf("writeString(%q) = %s, want %s", s, got, want)
		}
		if got := appendString([]byte("x"), []byte(s)); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Errorf("appendString([]byte(%q)) = %s, want x%s", s, got, want)
		}
		// No room at all in dst: appendString makes it.
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(nil, %q) = %s, want %s", s, got, want)
		}
		// appendEscaped tells whether the raw text needs HTML escapes,
		// which encodeReply's structured copy then gets: exactly when
		// json.HTMLEscape changes it.
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, []byte(s))
		if _, html := appendEscaped(nil, s); html != (escaped.String() != s) {
			t.Errorf("appendEscaped(%q) reports html %v", s, html)
		}
	}
}

// BenchmarkEncodeReply writes the answer of auto_read_rows for a 100-row
// page in 2025-06-18: the text escaped, the structured copy after it.
func BenchmarkEncodeReply(b *testing.B) {
	s := &Server{}
	page := benchPage(100)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		s.encodeReply(&buf, []byte("7"), reply{text: page}, era{structured: true})
	}
}

// benchPage is a page of rows like the bench's (bench/setup.go): names,
// prices, timestamps, notes with quotes, commas and non-ASCII text.
func benchPage(rows int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[`)
	for g := 1; g <= rows; g++ {
		if g > 1 {
			b.WriteByte(',')
		}
		note := ""
		switch g % 5 {
		case 0:
			note = "null"
		case 1:
			note = fmt.Sprintf(`"ships in %d days, handle with care"`, 1+g%14)
		case 2:
			note = fmt.Sprintf(`"customer said \"fragile\" - %08x"`, g*2654435761)
		case 3:
			note = `"` + strings.Repeat(fmt.Sprintf("%032x", g*40503), 1+g%3) + `"`
		default:
			note = fmt.Sprintf(`"café order #%d für Zoë"`, g)
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"Widget %X","price":%d.%02d,"qty":%d,"active":%v,"created":"2023-%02d-%02dT%02d:%02d:%02d.%06d+00:00","note":%s,"grp":0}`,
			g, g*977, g*7919%1000, g%100, g*31%500, g%3 != 0, 1+g%12, 1+g%28, g%24, g%60, g*7%60, g%1000000, note)
	}
	b.WriteString(`],"page":{"number":0,"size":100}}`)
	return b.Bytes()
}

// BenchmarkWriteString escapes a 100-row page into a JSON string, as the
// text of an auto_read_rows answer.
func BenchmarkWriteString(b *testing.B) {
	page := benchPage(100)
	var buf bytes.Buffer
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		buf.Reset()
		writeString(&buf, page)
	}
}
