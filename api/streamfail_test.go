package api_test

import (
	"testing"

	"github.com/littlebitlabs/minimal/engine"
)

// TestReadFailsBeforeFirstByte: a read whose database fails after the
// statement started but before the first byte of the answer left (view
// failing: its third row divides by zero, a page of rows is written once
// it is whole) is answered with an error status and the error envelope,
// not a connection closed without an answer; a client could not tell that
// from a network fault.
func TestReadFailsBeforeFirstByte(t *testing.T) {
	g := newGateway(t, engine.Config{})
	schema := g.pgSchema(pgDSN(t))
	for _, q := range []string{"ps=10&pg=0", "ps=10&pg=0&oy=id.as", "ps=10&pg=0&format=csv"} {
		r := g.do("GET", auto+"/pg/"+schema+"/failing?"+q, g.admin, nil)
		if r.status < 400 || r.errorMessage(t) == "" {
			t.Fatalf("%s: status %d, body %.300s; want an error status with its message", q, r.status, r.body)
		}
		t.Logf("%s: %d %s", q, r.status, r.errorMessage(t))
	}
}
