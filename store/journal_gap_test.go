package store

import (
	"fmt"
	"testing"
	"time"
)

// TestHoldBackKeepsSessionTail: the write that holdBack allows takes, of a
// session, only the entries before its first young running entry; a done
// entry after that one waits with it (so the running one can take its
// outcome into its INSERT), while an old running entry and other sessions'
// entries go.
func TestHoldBackKeepsSessionTail(t *testing.T) {
	now := time.Now()
	op := func(session string, age time.Duration, done bool) *journalOp {
		return &journalOp{accepted: true, queued: now.Add(-age), entry: JournalEntry{SessionID: session, Done: done}}
	}
	old := op("a", holdFor+time.Millisecond, false)
	young := op("a", 3*time.Millisecond, false)
	after := op("a", 2*time.Millisecond, true)
	other := op("b", time.Millisecond, true)
	last := op("a", time.Millisecond, true)
	outcome := &journalOp{report: func(error) {}, entry: JournalEntry{SessionID: "a", Seq: 1}}
	write, keep := holdBack([]*journalOp{old, young, after, other, last, outcome}, now)
	if len(write) != 3 || write[0] != old || write[1] != other || write[2] != outcome {
		t.Errorf("written: %v, want the old running entry, the other session's and the outcome", write)
	}
	if len(keep) != 3 || keep[0] != young || keep[1] != after || keep[2] != last {
		t.Errorf("kept: %v, want the young running entry and the two done after it", keep)
	}
	// Nothing young and running: everything goes.
	write, keep = holdBack([]*journalOp{old, after, other}, now)
	if len(write) != 3 || len(keep) != 0 {
		t.Errorf("written %d, kept %d; want 3 and 0", len(write), len(keep))
	}
}

func TestJournalOutcomeWaitsPastLaterCall(t *testing.T) {
	eachBackend(t, testJournalOutcomeWaitsPastLaterCall)
}

// testJournalOutcomeWaitsPastLaterCall: a call that finishes before an
// earlier call of its session does not push the earlier one's entry out
// as running: when the earlier one finishes within holdFor, both entries
// are written with their outcomes, no UPDATE. A journal read sees both
// calls, and a running one, at any time.
func testJournalOutcomeWaitsPastLaterCall(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "g")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	begin := func(i int) *ReadCall {
		t.Helper()
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: fmt.Sprintf(`{"i":%d}`, i)})
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	fail := func(err error) { t.Error(err) }
	clean := false
	for round := 0; round < 10 && !clean; round++ {
		updates := journalCounts.updates.Load()
		start := time.Now()
		a, b := begin(2*round), begin(2*round+1)
		s.FinishReadCall(b, "ok", "", 1, 0, fail)
		// Long enough for an idle write (readIdle), shorter than holdFor.
		time.Sleep(holdFor / 2)
		s.FinishReadCall(a, "ok", "", 2, 0, fail)
		late := time.Since(start) >= holdFor*3/4
		if err := s.FlushJournal(ctx); err != nil {
			t.Fatal(err)
		}
		if late {
			continue // the machine was too slow for the round to tell
		}
		clean = true
		if n := journalCounts.updates.Load() - updates; n != 0 {
			t.Errorf("round %d: %d outcome UPDATEs; want none, the earlier call's outcome in its INSERT", round, n)
		}
	}
	if !clean {
		t.Skip("no round finished within holdFor on this machine")
	}
	// A reader sees a running call at once.
	rc := begin(100)
	j := must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	e := j[len(j)-1]
	if e.Arguments != `{"i":100}` || e.Done {
		t.Fatalf("last entry %+v, want the running call", e)
	}
	s.FinishReadCall(rc, "ok", "", 3, 0, fail)
	j = must[[]JournalEntry](t)(s.Journal(ctx, ss.ID))
	for k, e := range j {
		if e.Seq != int64(k+1) || !e.Done || e.Outcome != "ok" {
			t.Fatalf("entry %d: %+v", k, e)
		}
	}
}

func TestJournalWriteGap(t *testing.T) { eachBackend(t, testJournalWriteGap) }

// testJournalWriteGap: read-only calls that come a few milliseconds apart,
// longer than readIdle, are not written one transaction each: the writer
// writes at most every writeGap when nothing waits for it. Each is still
// written within readLinger (another Store reads them without a flush),
// in order, with its outcome.
func testJournalWriteGap(t *testing.T) {
	s, dir := newStore(t)
	other := openStore(t, dir)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "q")
	ss := must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: time.Hour}))
	if err := s.FlushJournal(ctx); err != nil {
		t.Fatal(err)
	}
	const calls = 40
	commits := journalCounts.commits.Load()
	for i := range calls {
		_, rc, err := s.BeginReadCall(ctx, CallStart{SessionID: ss.ID, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: fmt.Sprintf(`{"i":%d}`, i)})
		if err != nil {
			t.Fatal(err)
		}
		s.FinishReadCall(rc, "ok", "", int64(i), 0, func(err error) { t.Error(err) })
		time.Sleep(readIdle + time.Millisecond)
	}
	var j []JournalEntry
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		j = must[[]JournalEntry](t)(other.Journal(ctx, ss.ID))
		if len(j) == calls || time.Now().After(deadline) {
			break
		}
	}
	if n := journalCounts.commits.Load() - commits; n > calls/2 {
		t.Errorf("%d calls %v apart written in %d transactions; want at most %d", calls, readIdle+time.Millisecond, n, calls/2)
	}
	if len(j) != calls {
		t.Fatalf("another store reads %d entries, want %d", len(j), calls)
	}
	for k, e := range j {
		if e.Seq != int64(k+1) || e.Arguments != fmt.Sprintf(`{"i":%d}`, k) || !e.Done || e.Rows != int64(k) {
			t.Fatalf("entry %d: %+v", k, e)
		}
	}
}
