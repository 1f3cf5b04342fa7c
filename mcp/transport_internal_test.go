package mcp

import (
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
)

// TestTransportOfKept: a transport session id found minted for one
// identity is kept, and the kept answer admits that identity only: the
// same id presented by another identity, of the same project or another,
// is refused, also after it was kept; a forged mark is never kept.
func TestTransportOfKept(t *testing.T) {
	a := &auth.Principal{ProjectID: "p1", IdentityID: "i1"}
	others := []*auth.Principal{{ProjectID: "p1", IdentityID: "i2"}, {ProjectID: "p2", IdentityID: "i1"}}
	id := newTransportID(a)
	for range 2 {
		if !transportOf(id, a) {
			t.Fatal("an id minted for a is refused")
		}
		marked.RLock()
		_, kept := marked.m[id]
		marked.RUnlock()
		if !kept {
			t.Fatal("a minted id is not kept")
		}
		for _, o := range others {
			if transportOf(id, o) {
				t.Fatalf("the id of %+v admits %+v", a, o)
			}
		}
	}
	nonce, _, _ := strings.Cut(id, ".")
	forged := nonce + "." + strings.Repeat("0", 2*markBytes)
	if transportOf(forged, a) {
		t.Fatal("a forged mark is admitted")
	}
	marked.RLock()
	_, kept := marked.m[forged]
	marked.RUnlock()
	if kept {
		t.Fatal("a forged mark is kept")
	}
	for range markedSize + 10 {
		transportOf(newTransportID(a), a)
	}
	marked.RLock()
	n := len(marked.m)
	marked.RUnlock()
	if n > markedSize {
		t.Fatalf("%d ids kept, over %d", n, markedSize)
	}
}
