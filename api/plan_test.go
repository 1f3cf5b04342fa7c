package api

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSplitAddress: splitAddress takes a path as strings.Split at '/'
// does, and only one of exactly five segments.
func TestSplitAddress(t *testing.T) {
	for _, path := range []string{"", "/", "a", "a/b/c/d", "a/b/c/d/e", "a/b/c/d/e/", "a/b/c/d/e/f", "/b/c/d/e", "a//c/d/e",
		"////", "/////", "a/b/c/d/", "org/proj/pg/public/items", "é/ü/pg/s/t t"} {
		var segs [5]string
		ok := splitAddress(path, &segs)
		want := strings.Split(path, "/")
		if ok != (len(want) == 5) || ok && segs != [5]string(want) {
			t.Errorf("%q: %v %q, want %q", path, ok, segs, want)
		}
	}
}

// BenchmarkPlanFromRequest plans the REST read of one row by key.
func BenchmarkPlanFromRequest(b *testing.B) {
	r := httptest.NewRequest("GET", AutoPrefix+"/org/proj/pg/public/items?ps=1&pg=0&id=eq.7", nil)
	params := r.URL.Query()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := planFromRequest(nil, r, Config{}, params); err != nil {
			b.Fatal(err)
		}
	}
}
