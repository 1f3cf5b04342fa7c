package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// FuzzTableAddress: a path tableAddress takes is one the router routes to
// tablePattern, with the same parameters: Server.tables serves no request
// the router would give to another route.
func FuzzTableAddress(f *testing.F) {
	routes := New(Deps{}, Config{Logger: slog.New(slog.DiscardHandler)}).(chi.Routes)
	for _, p := range []string{"demo/demo/pg/public/items", "a/b/c/d/e", "a/b/c/d/e/", "a/b/c/d/e/_describe", "a/b/c/d",
		"a//c/d/e", "a/b/c/d/e/f", "a/b/c/d/{e}", "a/b/c/d/*", "a/b/openapi.json/d/e", "é/ü/pg/s/t t", "a/b/c/d/e%2Ff"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		path := AutoPrefix + "/" + rest
		var segs [5]string
		if !tableAddress(path, &segs) {
			return
		}
		rc := chi.NewRouteContext()
		if got := routes.Find(rc, http.MethodGet, path); got != tablePattern {
			t.Fatalf("%q: routed to %q", path, got)
		}
		for i, k := range tableParams {
			if v := rc.URLParam(k); v != segs[i] {
				t.Fatalf("%q: %s %q, the router's %q", path, k, segs[i], v)
			}
		}
	})
}

// TestTableAddress: the shapes tableAddress takes.
func TestTableAddress(t *testing.T) {
	for path, want := range map[string]bool{
		AutoPrefix + "/demo/demo/pg/public/items":           true,
		AutoPrefix + "/a/b/c/d/e f":                         true,
		AutoPrefix + "/a/b/c/d/e/":                          false,
		AutoPrefix + "/a/b/c/d/e/" + DescribeSegment:        false,
		AutoPrefix + "/a/b/c/d":                             false,
		AutoPrefix + "/a//c/d/e":                            false,
		AutoPrefix + "//b/c/d/e":                            false,
		AutoPrefix + "/a/b/c/d/":                            false,
		AutoPrefix + "a/b/c/d/e":                            false,
		CustomPrefix + "/a/b/c/d/e":                         false,
		strings.TrimSuffix(AutoPrefix, "1") + "2/a/b/c/d/e": false,
	} {
		var segs [5]string
		if got := tableAddress(path, &segs); got != want {
			t.Errorf("%q: %v, want %v", path, got, want)
		}
	}
}

// TestTableRouteOnce: a table's read is routed once, and without path
// values: it costs no more allocations than a route of the root router
// without parameters behind the same authentication (the tokens endpoint),
// both refused for want of a token. Through the mounted sub-router it cost
// two more (the map of the request's path values and the joined route pattern).
func TestTableRouteOnce(t *testing.T) {
	if raceOn {
		t.Skip("the route contexts' pool drops some under the race detector: each new one grows its parameters' slices")
	}
	h := New(Deps{}, Config{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	allocs := func(method, path string) float64 {
		req := httptest.NewRequest(method, path, nil)
		return testing.AllocsPerRun(200, func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusUnauthorized {
				t.Fatalf("%s %s: %d", method, path, w.Code)
			}
		})
	}
	read, tokens := allocs(http.MethodGet, AutoPrefix+"/demo/demo/pg/public/items?ps=1&pg=0&id=eq.7"), allocs(http.MethodPost, TokensPath)
	if read > tokens {
		t.Errorf("a table's read: %v allocations, the tokens endpoint %v", read, tokens)
	}
}
