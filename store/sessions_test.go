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
	call := func(at time.Time, tool string) CallStart {
		return CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: at, Tool: tool, Arguments: `{}`}
	}
	touched, e, err := s.BeginCall(ctx, call(at, "ping"))
	if err != nil {
		t.Fatal(err)
	}
	if !touched.LastSeenAt.Equal(at) || e.Seq != 1 || e.Done || touched.Name != ss.Name || touched.Identity != "agent" {
		t.Fatalf("touched %+v; entry %+v", touched, e)
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

	// Within the touch step a call leaves last_seen_at alone; a second
	// later it moves.
	if got, _, err := s.BeginCall(ctx, call(at.Add(500*time.Millisecond), "ping")); err != nil || !got.LastSeenAt.Equal(at) {
		t.Fatalf("call within the step: %v, last seen %v", err, got.LastSeenAt)
	}
	at = at.Add(2 * time.Second)
	if got, e, err := s.BeginCall(ctx, call(at, "ping")); err != nil || !got.LastSeenAt.Equal(at) || e.Seq != 3 {
		t.Fatalf("call after the step: %v, last seen %v, seq %d", err, got.LastSeenAt, e.Seq)
	}
	if got := must[Session](t)(s.SessionByID(ctx, ss.ID)); !got.LastSeenAt.Equal(at) {
		t.Fatalf("stored last seen %v, want %v", got.LastSeenAt, at)
	}

	// Refusals write nothing. A session the writer has seen is refused by
	// insertLiveCall's conditions, then read to say why (the first
	// refusal of each pair below); one it has not seen is read at once.
	refusedAs := func(c CallStart, want Refusal) {
		t.Helper()
		_, _, err := s.BeginCall(ctx, c)
		var r *SessionRefused
		if !errors.As(err, &r) || r.Reason != want {
			t.Fatalf("BeginCall(%+v) = %v, want refusal %d", c, err, want)
		}
	}
	stranger := call(at, "x")
	stranger.IdentityID = "someone-else"
	refusedAs(stranger, RefusedUnknown)
	elsewhere := call(at, "x")
	elsewhere.ProjectID = "another-project"
	refusedAs(elsewhere, RefusedUnknown)
	// Just before the idle timeout the call is taken (and the writer has
	// seen the session again).
	at = at.Add(time.Minute - time.Nanosecond)
	if got, e, err := s.BeginCall(ctx, call(at, "ping")); err != nil || e.Seq != 4 || !got.LastSeenAt.Equal(at) {
		t.Fatalf("call just in time: %v, seq %d", err, e.Seq)
	}
	refusedAs(call(at.Add(time.Minute), "x"), RefusedExpired)
	refusedAs(call(at.Add(time.Minute+time.Second), "x"), RefusedExpired)
	if j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID)); len(j) != 4 {
		t.Fatalf("refused calls were journaled: %+v", j)
	}
	if got := must[Session](t)(s.SessionByID(ctx, ss.ID)); !got.LastSeenAt.Equal(at) {
		t.Fatalf("a refused call touched the session: %v", got.LastSeenAt)
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
	refusedAs(call(at.Add(2*time.Second), "x"), RefusedEnded)
	if _, ok := ended.ExpiresAt(); ok {
		t.Fatal("an ended session still expires")
	}

	// Unknowns and bad input.
	_, err = s.SessionByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)
	unknown := call(at, "x")
	unknown.SessionID = "nope"
	refusedAs(unknown, RefusedUnknown)
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
	if _, _, err := s.BeginCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "ping", Arguments: `{}`}); err != nil {
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
			_, e, err := s.BeginCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "ping", Arguments: `{}`})
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

func TestSessionOfTransport(t *testing.T) { eachBackend(t, testSessionOfTransport) }

// testSessionOfTransport: the newest session an identity started on a
// transport session is found by its id, ended or not; another identity's,
// another transport's or none is "".
func testSessionOfTransport(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "a")
	_, other := sessionOwner(t, s, "b")
	start := func(transport string) Session {
		t.Helper()
		return must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", Transport: transport}))
	}
	find := func(projectID, identityID, transport string) string {
		t.Helper()
		return must[string](t)(s.SessionOfTransport(ctx, projectID, identityID, transport))
	}
	if got := find(p.ID, id.ID, "t1"); got != "" {
		t.Fatalf("before any: %q", got)
	}
	first := start("t1")
	start("")   // no transport session
	start("t2") // another one
	if got := find(p.ID, id.ID, "t1"); got != first.ID {
		t.Fatalf("t1: %q, want %q", got, first.ID)
	}
	if err := s.EndSession(ctx, first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := find(p.ID, id.ID, "t1"); got != first.ID {
		t.Fatalf("t1 after end: %q, want the ended %q", got, first.ID)
	}
	time.Sleep(2 * time.Millisecond) // started_at orders them
	second := start("t1")
	if got := find(p.ID, id.ID, "t1"); got != second.ID {
		t.Fatalf("t1 rebound: %q, want %q", got, second.ID)
	}
	if got := find(other.ProjectID, other.ID, "t1"); got != "" {
		t.Fatalf("another identity: %q", got)
	}
}
