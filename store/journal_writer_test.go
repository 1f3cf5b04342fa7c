package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

func TestJournalConcurrent(t *testing.T) { eachBackend(t, testJournalConcurrent) }

// testJournalConcurrent: calls begun at once from many goroutines, in two
// sessions, share the writer's transactions and still get every Seq of
// their session once, in 1..n; a call of another identity, or in an unknown
// session, in the middle of a batch is refused alone; every outcome lands.
func testJournalConcurrent(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "j")
	ids := twoSessions(t, s, p, id)
	const perSession = 40
	type got struct {
		session string
		seq     int64
		err     error
	}
	out := make(chan got, 3*perSession)
	var wg sync.WaitGroup
	for i := range perSession {
		for _, sid := range ids {
			wg.Go(func() {
				_, e, err := s.BeginCall(ctx, CallStart{SessionID: sid, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{"i":1}`})
				if err == nil {
					err = s.FinishCall(ctx, sid, e.Seq, "ok", "", int64(i), time.Millisecond)
				}
				out <- got{sid, e.Seq, err}
			})
		}
		wg.Go(func() {
			_, _, err := s.BeginCall(ctx, CallStart{SessionID: ids[i%2], ProjectID: p.ID, IdentityID: "stranger", At: time.Now(), Tool: "x", Arguments: `{}`})
			if r := (*SessionRefused)(nil); !errors.As(err, &r) || r.Reason != RefusedUnknown {
				t.Errorf("another identity's call: %v", err)
			}
		})
		wg.Go(func() {
			_, _, err := s.BeginCall(ctx, CallStart{SessionID: "00000000-0000-0000-0000-000000000000", ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "x", Arguments: `{}`})
			if r := (*SessionRefused)(nil); !errors.As(err, &r) || r.Reason != RefusedUnknown {
				t.Errorf("unknown session: %v", err)
			}
		})
	}
	wg.Wait()
	close(out)
	seqs := map[string]map[int64]bool{}
	for g := range out {
		if g.err != nil {
			t.Fatalf("call in %s: %v", g.session, g.err)
		}
		if seqs[g.session] == nil {
			seqs[g.session] = map[int64]bool{}
		}
		if seqs[g.session][g.seq] {
			t.Fatalf("seq %d of %s given twice", g.seq, g.session)
		}
		seqs[g.session][g.seq] = true
	}
	for _, sid := range ids {
		j := must[[]JournalEntry](t)(s.Journal(ctx, sid))
		if len(j) != perSession || len(seqs[sid]) != perSession {
			t.Fatalf("session %s: %d entries, %d seqs, want %d", sid, len(j), len(seqs[sid]), perSession)
		}
		for k, e := range j {
			if e.Seq != int64(k+1) || e.Tool != "t" || !e.Done || e.Outcome != "ok" {
				t.Fatalf("entry %d: %+v", k, e)
			}
		}
	}
}

// TestJournalClosed: a call begun after Close is refused, not left waiting.
func TestJournalClosed(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "c")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	s.Close()
	_, _, err := s.BeginCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
	wantKind(t, err, fault.Unavailable)
}

func TestFinishCallLater(t *testing.T) { eachBackend(t, testFinishCallLater) }

// testFinishCallLater: an outcome queued without waiting is in every later
// Journal read of the store; one that cannot be written reaches report.
func testFinishCallLater(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "l")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c"}))
	var seqs []int64
	for range 20 {
		_, e, err := s.BeginCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		s.FinishCallLater(ss.ID, e.Seq, "ok", "", e.Seq, time.Millisecond, func(err error) { t.Errorf("seq %d: %v", e.Seq, err) })
		seqs = append(seqs, e.Seq)
	}
	j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	if len(j) != len(seqs) {
		t.Fatalf("%d entries, want %d", len(j), len(seqs))
	}
	for _, e := range j {
		if !e.Done || e.Outcome != "ok" || e.Rows != e.Seq {
			t.Fatalf("entry %+v not finished", e)
		}
	}
	errs := make(chan error, 2)
	s.FinishCallLater(ss.ID, 999, "ok", "", 0, 0, func(err error) { errs <- err })
	s.FinishCallLater(ss.ID, 1, "", "", 0, 0, func(err error) { errs <- err })
	kinds := map[fault.Kind]bool{}
	for range 2 {
		select {
		case err := <-errs:
			kinds[fault.KindOf(err)] = true
		case <-time.After(5 * time.Second):
			t.Fatal("a failed outcome was not reported")
		}
	}
	if !kinds[fault.Invalid] || !kinds[fault.NotFound] {
		t.Fatalf("reported kinds %v, want Invalid (empty outcome) and NotFound (unknown seq)", kinds)
	}
}

// twoSessions opens two live sessions of id in p and returns their ids.
func twoSessions(t *testing.T, s *Store, p Project, id Identity) []string {
	t.Helper()
	var ids []string
	for range 2 {
		ss := must[Session](t)(s.CreateSession(t.Context(), Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
		ids = append(ids, ss.ID)
	}
	return ids
}
