package api

import (
	"net/http"
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/wire"
)

// TestContentTypeValue: the shared Content-Type value of each read format
// is Header.Set's, and an Add to a header holding it leaves it as it was.
func TestContentTypeValue(t *testing.T) {
	for _, f := range []wire.Format{"", wire.JSON, wire.NDJSON, wire.CSV, wire.XML, wire.YAML, wire.BSON, "other"} {
		want := http.Header{}
		want.Set("Content-Type", f.ContentType())
		h := http.Header{}
		h["Content-Type"] = contentTypeValue(f)
		if !slices.Equal(h["Content-Type"], want["Content-Type"]) {
			t.Fatalf("%q: %q, want %q", f, h["Content-Type"], want["Content-Type"])
		}
		h.Add("Content-Type", "x/y")
		if got := contentTypeValue(f); !slices.Equal(got, []string{f.ContentType()}) || cap(got) != 1 {
			t.Fatalf("%q after an Add: %q (cap %d)", f, got, cap(got))
		}
	}
}
