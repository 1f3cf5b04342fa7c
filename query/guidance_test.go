package query

import (
	"net/url"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

// TestPostgRESTNames: PostgREST's reading parameters answer a 400 naming
// ours; a valid filter on a column so named still filters.
func TestPostgRESTNames(t *testing.T) {
	for _, c := range []struct{ query, use string }{
		{"limit=10", "use ps/pg"},
		{"offset=20", "use ps/pg"},
		{"order=id.desc", "use oy"},
		{"order=name", "use oy"},
		{"select=id,full_name", "use fc"},
		{"select=*", "use fc"},
	} {
		q, _ := url.ParseQuery(c.query + "&ps=1&pg=0")
		_, err := FromParams(Read, q, Limits{})
		if fault.KindOf(err) != fault.Invalid {
			t.Fatalf("%s: %v, want Invalid", c.query, err)
		}
		if msg := fault.As(err).Message; !strings.Contains(msg, c.use) {
			t.Errorf("%s: %q does not say %q", c.query, msg, c.use)
		}
	}
	for _, qs := range []string{"limit=eq.5", "order=gt.2", "select=is.null", "offset=in.1,2"} {
		q, _ := url.ParseQuery(qs + "&ps=1&pg=0")
		p, err := FromParams(Read, q, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", qs, err)
		}
		if c, ok := p.Where.(*Cond); !ok || c.Column != strings.Split(qs, "=")[0] {
			t.Errorf("%s: where %#v, want a filter on the column", qs, p.Where)
		}
	}
	// Another misspelt parameter keeps the filter grammar's error.
	q, _ := url.ParseQuery("limits=10&ps=1&pg=0")
	if _, err := FromParams(Read, q, Limits{}); err == nil || strings.Contains(fault.As(err).Message, "PostgREST") {
		t.Errorf("limits=10: %v", err)
	}
}
