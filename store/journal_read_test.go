package store

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestReadCallsJournaled(t *testing.T) { eachBackend(t, testReadCallsJournaled) }

// testReadCallsJournaled: read-only calls begun at once from many
// goroutines, most answered from the writer's memory of the session before
// their entries are written, are all in the journal — each Seq once, in
// 1..n, with its outcome — when it is read; and the calls begun and
// finished right before Close are in the journal of the store opened again
// on the same data directory (a clean shutdown loses none).
func testReadCallsJournaled(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "r")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	call := func(i int) error {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		if err != nil {
			return err
		}
		s.FinishReadCall(rc, "ok", "", int64(i), time.Millisecond, func(err error) { t.Errorf("call %d: %v", i, err) })
		return nil
	}
	const n = 60
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := call(i); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	if len(j) != n {
		t.Fatalf("%d entries, want %d", len(j), n)
	}
	rows := map[int64]bool{}
	for k, e := range j {
		if e.Seq != int64(k+1) || !e.Done || e.Outcome != "ok" || rows[e.Rows] {
			t.Fatalf("entry %d: %+v", k, e)
		}
		rows[e.Rows] = true
	}

	for i := range 10 {
		if err := call(n + i); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s2 := openStore(t, dir)
	j = must[[]JournalEntry](t)(s2.Journal(ctx, ss.ID))
	if len(j) != n+10 {
		t.Fatalf("after Close and Open: %d entries, want %d", len(j), n+10)
	}
	for _, e := range j[n:] {
		if !e.Done || e.Outcome != "ok" {
			t.Fatalf("after Close and Open: entry %+v not finished", e)
		}
	}
}

func TestReadCallsEndedSession(t *testing.T) { eachBackend(t, testReadCallsEndedSession) }

// testReadCallsEndedSession: a session ended through the store refuses the
// next read-only call at once; one ended through another store on the same
// data directory refuses it once the journal has been written (within
// readLinger; FlushJournal here), and the calls that slipped in before are
// journaled all the same.
func testReadCallsEndedSession(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "e")
	begin := func(sid string) error {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: sid, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		if err == nil {
			s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("call in %s: %v", sid, err) })
		}
		return err
	}
	ended := func(err error) bool {
		var r *SessionRefused
		return errors.As(err, &r) && r.Reason == RefusedEnded
	}

	a := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "a", Context: "c"}))
	for range 3 {
		if err := begin(a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndSession(ctx, a.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := begin(a.ID); !ended(err) {
		t.Fatalf("a call after EndSession: %v, want the session ended", err)
	}
	if j := must[[]JournalEntry](t)(s.Journal(ctx, a.ID)); len(j) != 3 {
		t.Fatalf("%d entries, want 3", len(j))
	}

	b := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "b", Context: "c"}))
	for range 3 {
		if err := begin(b.ID); err != nil {
			t.Fatal(err)
		}
	}
	other := openStore(t, dir)
	if err := other.EndSession(ctx, b.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	slipped := 0
	for range 3 {
		if err := begin(b.ID); err == nil {
			slipped++
		} else if !ended(err) {
			t.Fatal(err)
		}
	}
	t.Logf("%d calls slipped in after the end", slipped)
	if err := s.FlushJournal(ctx); err != nil {
		t.Fatal(err)
	}
	if err := begin(b.ID); !ended(err) {
		t.Fatalf("a call after the journal was written: %v, want the session ended", err)
	}
	if j := must[[]JournalEntry](t)(s.Journal(ctx, b.ID)); len(j) != 3+slipped {
		t.Fatalf("%d entries, want %d", len(j), 3+slipped)
	}
}
