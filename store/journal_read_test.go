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

// testReadCallsEndedSession: a session ended through the store, or through
// another store on the same data directory (another replica), refuses the
// next read-only call at once, though the entries of the calls before are
// still waiting to be written; those are all journaled.
func testReadCallsEndedSession(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "e")
	other := openStore(t, dir)
	begin := func(sid string) error {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: sid, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		if err == nil {
			s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("call in %s: %v", sid, err) })
		}
		return err
	}
	for _, ender := range []*Store{s, other} {
		ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
		for range 3 {
			if err := begin(ss.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := ender.EndSession(ctx, ss.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		var r *SessionRefused
		if err := begin(ss.ID); !errors.As(err, &r) || r.Reason != RefusedEnded {
			t.Fatalf("a call after the end (same store %v): %v, want the session ended", ender == s, err)
		}
		if j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID)); len(j) != 3 {
			t.Fatalf("%d entries, want 3", len(j))
		}
	}
	var r *SessionRefused
	if _, _, err := s.BeginReadCall(ctx, CallStart{SessionID: "00000000-0000-0000-0000-000000000000", ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`}); !errors.As(err, &r) || r.Reason != RefusedUnknown {
		t.Fatalf("an unknown session: %v", err)
	}
}

func TestReadCallSession(t *testing.T) { eachBackend(t, testReadCallSession) }

// testReadCallSession: the session BeginReadCall answers with (one row
// read by key, no join) holds what its check reads, equal to the stored
// session's, and a session that idled out is refused as expired with the
// idle timeout its message names.
func testReadCallSession(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "r")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	got, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: ss.LastSeenAt, Tool: "t", Arguments: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	s.FinishReadCall(rc, "ok", "", 0, time.Millisecond, nil)
	if got.ID != ss.ID || got.ProjectID != p.ID || got.IdentityID != id.ID || got.IdleTimeout != time.Hour ||
		!got.StartedAt.Equal(ss.StartedAt) || !got.LastSeenAt.Equal(ss.LastSeenAt) || !got.EndedAt.IsZero() {
		t.Fatalf("BeginReadCall's session = %+v, stored %+v", got, ss)
	}
	exp, ok := got.ExpiresAt()
	if want, _ := ss.ExpiresAt(); !ok || !exp.Equal(want) {
		t.Fatalf("ExpiresAt = %v %v, want %v", exp, ok, want)
	}
	_, _, err = s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: ss.LastSeenAt.Add(2 * time.Hour), Tool: "t", Arguments: `{}`})
	var r *SessionRefused
	if !errors.As(err, &r) || r.Reason != RefusedExpired || r.Session.IdleTimeout != time.Hour || r.Session.ID != ss.ID {
		t.Fatalf("idled-out session: %v (%+v)", err, r)
	}
}

func TestReadCallsRunning(t *testing.T) { eachBackend(t, testReadCallsRunning) }

// testReadCallsRunning: the entry of a read-only call still running, which
// the writer holds back for its outcome, is written within readLinger all
// the same (another Store sees it, `running`, without any flush of the
// first), in the order of the session's calls; outcomes that come later are
// written too.
func testReadCallsRunning(t *testing.T) {
	s, dir := newStore(t)
	other := openStore(t, dir)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "w")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	var calls []*ReadCall
	for i := range 4 {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{"i":` + string(rune('0'+i)) + `}`})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, rc)
		if i == 0 {
			s.FinishReadCall(rc, "ok", "", 0, 0, func(err error) { t.Errorf("call 0: %v", err) })
		}
	}
	seen := func(done int) []JournalEntry {
		t.Helper()
		// Within readLinger; a loaded machine may take longer.
		deadline := time.Now().Add(5 * time.Second)
		for {
			j := must[[]JournalEntry](t)(other.Journal(ctx, ss.ID))
			n := 0
			for _, e := range j {
				if e.Done {
					n++
				}
			}
			if len(j) == 4 && n == done {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("another store reads %d entries, %d done, 5 s after the calls; want 4, %d done", len(j), n, done)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	j := seen(1)
	for k, e := range j {
		if e.Seq != int64(k+1) || e.Arguments != `{"i":`+string(rune('0'+k))+`}` || e.Done != (k == 0) {
			t.Fatalf("entry %d: %+v", k, e)
		}
	}
	for i, rc := range calls[1:] {
		s.FinishReadCall(rc, "ok", "", int64(i+1), 0, func(err error) { t.Errorf("call %d: %v", i+1, err) })
	}
	for k, e := range seen(4) {
		if e.Seq != int64(k+1) || e.Outcome != "ok" || e.Rows != int64(k) {
			t.Fatalf("entry %d after the outcomes: %+v", k, e)
		}
	}
}
