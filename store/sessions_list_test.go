package store

import (
	"testing"
	"time"
)

// TestSessionsList lists a project's sessions newest first, up to the
// limit, and none of another project.
func TestSessionsList(t *testing.T) { eachBackend(t, testSessionsList) }

func testSessionsList(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	proj, id := sessionOwner(t, s, "p1")
	other, otherID := sessionOwner(t, s, "p2")
	var ids []string
	for _, name := range []string{"a", "b", "c"} {
		ss, err := s.CreateSession(ctx, Session{ProjectID: proj.ID, IdentityID: id.ID, Name: name, IdleTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ss.ID)
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := s.CreateSession(ctx, Session{ProjectID: other.ID, IdentityID: otherID.ID, Name: "x"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sessions(ctx, proj.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != ids[2] || got[2].ID != ids[0] || got[0].Identity != id.Name || got[0].IdleTimeout != time.Hour {
		t.Fatalf("sessions: %+v", got)
	}
	if got, err := s.Sessions(ctx, proj.ID, 2); err != nil || len(got) != 2 || got[1].Name != "b" {
		t.Fatalf("limit 2: %+v %v", got, err)
	}
	if got, err := s.Sessions(ctx, "no-such-project", 10); err != nil || len(got) != 0 {
		t.Fatalf("unknown project: %+v %v", got, err)
	}
}
