package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// sessionOwner creates a tenant with an mcp identity.
func sessionOwner(t *testing.T, s *Store, abbr string) (Project, Identity) {
	t.Helper()
	_, p, sp := tenant(t, s, abbr)
	id := must[Identity](t)(s.CreateIdentity(t.Context(), Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "agent", Kind: KindMCP, KeyType: "crud", Enabled: true}))
	return p, id
}

func TestSessionsLifecycle(t *testing.T) { eachBackend(t, testSessionsLifecycle) }

func testSessionsLifecycle(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "a")

	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Minute}))
	if ss.ID == "" || ss.Identity != "agent" || ss.StartedAt.IsZero() || !ss.LastSeenAt.Equal(ss.StartedAt) {
		t.Fatalf("created %+v", ss)
	}
	if exp, ok := ss.ExpiresAt(); !ok || !exp.Equal(ss.StartedAt.Add(time.Minute)) {
		t.Fatalf("ExpiresAt = %v %v", exp, ok)
	}
	got := must[Session](t)(s.SessionByID(ctx, ss.ID))
	if got != ss {
		t.Fatalf("read back %+v, want %+v", got, ss)
	}

	// A call is journaled before it runs, with the session touched.
	at := ss.StartedAt.Add(10 * time.Second)
	var seen Session
	touched, e, err := s.BeginCall(ctx, ss.ID, at, func(cur Session) error { seen = cur; return nil }, "ping", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if seen != ss || !touched.LastSeenAt.Equal(at) || e.Seq != 1 || e.Done {
		t.Fatalf("check saw %+v; touched %+v; entry %+v", seen, touched, e)
	}
	j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	if len(j) != 1 || j[0].Tool != "ping" || j[0].Arguments != `{}` || j[0].Done || !j[0].StartedAt.Equal(at) {
		t.Fatalf("journal before finish %+v", j)
	}
	if err := s.FinishCall(ctx, ss.ID, 1, "FORBIDDEN", "no", 3, 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	j = must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	if !j[0].Done || j[0].Outcome != "FORBIDDEN" || j[0].Message != "no" || j[0].Rows != 3 || j[0].Duration != 1500*time.Microsecond {
		t.Fatalf("journal after finish %+v", j[0])
	}
	wantKind(t, s.FinishCall(ctx, ss.ID, 9, "ok", "", 0, 0), fault.NotFound)
	wantKind(t, s.FinishCall(ctx, ss.ID, 1, "", "", 0, 0), fault.Invalid)

	// A refusing check writes nothing.
	refuse := fault.New(fault.Invalid, "refused")
	if _, _, err := s.BeginCall(ctx, ss.ID, at.Add(time.Hour), func(Session) error { return refuse }, "x", `{}`); !errors.Is(err, refuse) {
		t.Fatalf("refusing check: %v", err)
	}
	if j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID)); len(j) != 1 {
		t.Fatalf("refused call was journaled: %+v", j)
	}
	if got := must[Session](t)(s.SessionByID(ctx, ss.ID)); !got.LastSeenAt.Equal(at) {
		t.Fatalf("refused call touched the session: %v", got.LastSeenAt)
	}

	// Ending is once.
	if err := s.EndSession(ctx, ss.ID, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.EndSession(ctx, ss.ID, at), fault.NotFound)
	ended := must[Session](t)(s.SessionByID(ctx, ss.ID))
	if ended.EndedAt.IsZero() {
		t.Fatal("EndedAt not set")
	}
	if _, ok := ended.ExpiresAt(); ok {
		t.Fatal("an ended session still expires")
	}

	// Unknowns and bad input.
	_, err = s.SessionByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)
	_, _, err = s.BeginCall(ctx, "nope", at, func(Session) error { return nil }, "x", `{}`)
	wantKind(t, err, fault.NotFound)
	_, err = s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: "nope", Name: "n", Context: "c"})
	wantKind(t, err, fault.NotFound)
	_, err = s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: -1})
	wantKind(t, err, fault.Invalid)
	other, _ := sessionOwner(t, s, "b")
	_, err = s.CreateSession(ctx, Session{ProjectID: other.ID, IdentityID: id.ID, Name: "n", Context: "c"})
	wantKind(t, err, fault.NotFound)

	// No idle timeout: never expires.
	forever := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	if _, ok := forever.ExpiresAt(); ok {
		t.Fatal("a session without idle timeout expires")
	}
}

// Journal writes are records: they leave the change counter, which makes
// servers reload their caches, alone.
func TestSessionWritesLeaveChangeSeq(t *testing.T) { eachBackend(t, testSessionWritesLeaveChangeSeq) }

func testSessionWritesLeaveChangeSeq(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "a")
	before := must[int64](t)(s.ChangeSeq(ctx))
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	if _, _, err := s.BeginCall(ctx, ss.ID, time.Now(), func(Session) error { return nil }, "ping", `{}`); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishCall(ctx, ss.ID, 1, "ok", "", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.EndSession(ctx, ss.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if after := must[int64](t)(s.ChangeSeq(ctx)); after != before {
		t.Fatalf("ChangeSeq moved from %d to %d", before, after)
	}
}

// Concurrent calls of one session get distinct, gapless sequence numbers.
func TestJournalConcurrentCalls(t *testing.T) { eachBackend(t, testJournalConcurrentCalls) }

func testJournalConcurrentCalls(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "a")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, e, err := s.BeginCall(ctx, ss.ID, time.Now(), func(Session) error { return nil }, "ping", `{}`)
			if err == nil {
				err = s.FinishCall(ctx, ss.ID, e.Seq, "ok", "", 0, 0)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	if len(j) != n {
		t.Fatalf("%d entries, want %d", len(j), n)
	}
	for i, e := range j {
		if e.Seq != int64(i+1) || !e.Done {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
}
