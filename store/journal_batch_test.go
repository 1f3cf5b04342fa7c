package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

func TestJournalOutcomesBatched(t *testing.T) { eachBackend(t, testJournalOutcomesBatched) }

// testJournalOutcomesBatched: one transaction of the writer with many
// outcomes (written in multi-row UPDATEs) and a call begun between them
// gives each what outcomes written one at a time give: an unknown entry's
// outcome NotFound and nothing written for it, an entry's second outcome
// the one that stays, every other outcome on its entry, and the call its
// Seq.
func testJournalOutcomesBatched(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "o")
	ids := twoSessions(t, s, p, id)
	const n = 30
	for range n {
		for _, sid := range ids {
			if _, _, err := s.BeginCall(ctx, CallStart{SessionID: sid, ProjectID: p.ID, IdentityID: id.ID, At: time.Now(), Tool: "t", Arguments: `{}`}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The writer is idle (every call above has its answer): the batch is
	// written here, as the writer writes one.
	finish := func(sid string, seq int64, outcome string, rows int64) *journalOp {
		return &journalOp{report: func(error) {}, entry: JournalEntry{SessionID: sid, Seq: seq, Done: true, Outcome: outcome, Message: "m", Rows: rows, Duration: time.Duration(rows)}}
	}
	var batch []*journalOp
	for seq := int64(1); seq <= n; seq++ {
		batch = append(batch, finish(ids[0], seq, "ok", seq))
		if seq%2 == 0 {
			batch = append(batch, finish(ids[1], seq, "E", seq))
		}
		switch seq {
		case 5:
			batch = append(batch, finish(ids[0], 999, "ok", 0))
		case 7:
			batch = append(batch, finish(ids[0], 3, "AGAIN", 333))
		case 20:
			batch = append(batch, &journalOp{begin: true, at: time.Now(), projectID: p.ID, identityID: id.ID,
				entry: JournalEntry{SessionID: ids[1], Tool: "late", Arguments: `{}`}})
		}
	}
	s.writeJournal(batch)
	for _, op := range batch {
		switch {
		case op.begin:
			if op.err != nil || op.entry.Seq != n+1 {
				t.Fatalf("the call begun in the batch: seq %d, %v", op.entry.Seq, op.err)
			}
		case op.entry.Seq == 999:
			wantKind(t, op.err, fault.NotFound)
		case op.err != nil:
			t.Fatalf("outcome of %d: %v", op.entry.Seq, op.err)
		}
	}
	j := must[[]JournalEntry](t)(s.Journal(ctx, ids[0]))
	if len(j) != n {
		t.Fatalf("%d entries, want %d", len(j), n)
	}
	for _, e := range j {
		want := JournalEntry{Outcome: "ok", Rows: e.Seq}
		if e.Seq == 3 {
			want = JournalEntry{Outcome: "AGAIN", Rows: 333}
		}
		if !e.Done || e.Outcome != want.Outcome || e.Message != "m" || e.Rows != want.Rows || e.Duration != time.Duration(want.Rows) {
			t.Fatalf("entry %+v, want outcome %q rows %d", e, want.Outcome, want.Rows)
		}
	}
	j = must[[]JournalEntry](t)(s.Journal(ctx, ids[1]))
	if len(j) != n+1 {
		t.Fatalf("%d entries, want %d", len(j), n+1)
	}
	for _, e := range j {
		switch {
		case e.Seq == n+1:
			if e.Tool != "late" || e.Done {
				t.Fatalf("the call begun in the batch: %+v", e)
			}
		case e.Seq%2 == 0:
			if !e.Done || e.Outcome != "E" || e.Rows != e.Seq {
				t.Fatalf("entry %+v, want outcome E", e)
			}
		case e.Done:
			t.Fatalf("entry %+v has an outcome nobody gave", e)
		}
	}
}

func TestJournalEntriesBatched(t *testing.T) { eachBackend(t, testJournalEntriesBatched) }

// testJournalEntriesBatched: the entries of read-only calls one
// transaction of the writer appends, in chunks whose rows share their
// tool and outcome or not, running or done, in two sessions, are each
// stored as the call gave it.
func testJournalEntriesBatched(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	p, id := sessionOwner(t, s, "e")
	ids := twoSessions(t, s, p, id)
	at := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	want := map[string][]JournalEntry{}
	var batch []*journalOp
	add := func(sid string, e JournalEntry) {
		e.SessionID, e.Seq = sid, int64(len(want[sid])+1)
		e.StartedAt = at.Add(time.Duration(len(batch)) * time.Millisecond).UTC()
		want[sid] = append(want[sid], e)
		op := &journalOp{begin: true, accepted: true, touch: len(batch) == 0, at: e.StartedAt, projectID: p.ID, identityID: id.ID, entry: e}
		op.entry.Seq = 0
		batch = append(batch, op)
	}
	// Session 0: 16 alike (one shared chunk), 16 with a tool, an outcome
	// or arguments of their own, 4 running, 3 alone; session 1 between.
	for i := range 16 {
		add(ids[0], JournalEntry{Tool: "auto_read_rows", Arguments: `{"page":1}`, Done: true, Outcome: "ok", Rows: int64(i), Duration: time.Duration(1000 + i)})
	}
	for i := range 16 {
		e := JournalEntry{Tool: "auto_read_rows", Arguments: fmt.Sprintf(`{"page":%d}`, i), Done: true, Outcome: "ok", Rows: 100, Duration: time.Millisecond}
		switch i % 4 {
		case 1:
			e.Tool = "meta_tables"
		case 2:
			e.Outcome, e.Message = "INVALID", fmt.Sprintf("bad %d", i)
		case 3:
			e.Done, e.Outcome, e.Rows, e.Duration = false, "", 0, 0
		}
		add(ids[0], e)
		if i%5 == 0 {
			add(ids[1], JournalEntry{Tool: "ping", Arguments: `{}`, Done: true, Outcome: "ok"})
		}
	}
	for range 4 {
		add(ids[0], JournalEntry{Tool: "auto_read_rows", Arguments: `{"page":2}`})
	}
	for i := range 3 {
		add(ids[0], JournalEntry{Tool: "t", Arguments: `{"x":"é"}`, Done: i != 1, Outcome: map[bool]string{true: "ok"}[i != 1], Rows: int64(i)})
	}
	s.writeJournal(batch)
	for _, op := range batch {
		if op.writeErr != nil || op.err != nil {
			t.Fatalf("entry %+v: %v %v", op.entry, op.writeErr, op.err)
		}
	}
	for _, sid := range ids {
		got := must[[]JournalEntry](t)(s.Journal(ctx, sid))
		if !reflect.DeepEqual(got, want[sid]) {
			for i := range min(len(got), len(want[sid])) {
				if !reflect.DeepEqual(got[i], want[sid][i]) {
					t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want[sid][i])
				}
			}
			t.Fatalf("session %s: %d entries, want %d", sid, len(got), len(want[sid]))
		}
	}
	ss := must[Session](t)(s.SessionByID(ctx, ids[0]))
	if !ss.LastSeenAt.Equal(at) {
		t.Fatalf("last seen %v, want %v (the touch of the first call)", ss.LastSeenAt, at)
	}
}
