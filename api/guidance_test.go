package api_test

import (
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/engine"
)

// TestPostgRESTGuidance: PostgREST's limit, offset, order and select
// answer over HTTP a 400 naming our parameter, on reads and writes alike.
func TestPostgRESTGuidance(t *testing.T) {
	g := newGateway(t, engine.Config{})
	notes := auto + "/mi/app/notes"
	for _, c := range []struct{ method, query, use string }{
		{"GET", "ps=1&pg=0&limit=10", "use ps/pg"},
		{"GET", "ps=1&pg=0&offset=10", "use ps/pg"},
		{"GET", "ps=1&pg=0&order=title.desc", "use oy"},
		{"GET", "ps=1&pg=0&select=id,title", "use fc"},
		{"DELETE", "order=title.asc", "use oy"},
	} {
		r := g.do(c.method, notes+"?"+c.query, g.admin, nil)
		expect(t, r, 400)
		if e := r.json(t)["error"].(map[string]any); e["code"] != "INVALID" || !strings.Contains(e["message"].(string), c.use) {
			t.Errorf("%s ?%s: %s, want a message with %q", c.method, c.query, r.body, c.use)
		}
	}
	// A valid filter on a column so named is a filter: unknown column here.
	r := g.do("GET", notes+"?ps=1&pg=0&limit=eq.5", g.admin, nil)
	expect(t, r, 400)
	if msg := r.errorMessage(t); strings.Contains(msg, "PostgREST") || !strings.Contains(msg, "limit") {
		t.Errorf("limit=eq.5: %s", msg)
	}
}
