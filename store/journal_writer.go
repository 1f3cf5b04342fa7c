package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// The journal writer: every BeginCall and FinishCall of the process is
// handed to one goroutine, which writes whatever has queued up in one
// transaction and then answers each caller. A caller still returns only
// once its entry is committed — the journal holds a call before the tool
// runs — but sixteen concurrent calls cost one commit instead of sixteen,
// and they no longer queue on the database's write lock one by one.
//
// A read-only call (BeginReadCall) is checked by its caller, who reads the
// session, and queued for the writer without waiting: its entry waits in
// memory (pending) up to readLinger, its outcome joins it when the call
// finishes first, and the whole batch is then written in one transaction,
// a few multi-row INSERTs per session (insertEntries). A write nobody waits
// for leaves the entries of calls still running, taken less than
// holdFor before, for the next one (holdBack), so that a call's outcome
// usually rides in its entry's INSERT rather than in an UPDATE of its own.
// A journal read
// (Journal, FlushJournal), a call somebody waits for and Close write what
// is pending first, so a reader never misses a call; a crash loses the
// read-only calls of the last readLinger, and what waits in the queue
// (journalQueue) while a commit is held up.

// touchStep is the granularity of a session's LastSeenAt.
const touchStep = time.Second

// journalCounts counts, over the process, the writer's transactions and
// the statements that write outcomes of entries written before (UPDATEs),
// for the tests and benchmarks that show how calls are batched.
var journalCounts struct{ commits, updates atomic.Int64 }

// maxJournalBatch bounds the operations of one transaction. Under load a
// commit comes every holdFor or every maxJournalBatch operations,
// whichever is first, and each costs a transaction, the pages it dirties
// written to the WAL and a read by the next session check: at 64, a
// gateway serving 3,000 read-only calls a second committed every 21 ms (an
// outcome that finds its entry pending joins it), at 256 every holdFor. A
// batch of 256 is a few milliseconds of SQLite's write lock.
const maxJournalBatch = 256

// journalQueue is the room of the writer's queue: the operations that may
// wait for the writer before their callers do. A commit now and then takes
// tens of milliseconds — on a slow disk, behind another writer's lock, or
// (before checkpointJournal) the SQLite commit that checkpointed the
// write-ahead log — while a busy gateway queues a few thousand operations
// a second (a read-only call's entry and its outcome); with room for only
// a batch, every call waited behind such a commit. A caller waits only
// when the writer is behind by this much: the bound on what a held-up
// writer keeps in memory, as the audit writer's queue is.
const journalQueue = 4096

// journalOp is one BeginCall (begin) or FinishCall. The writer fills the
// results and closes done.
type journalOp struct {
	begin bool
	// barrier writes nothing: it is done when everything queued before it
	// is (Journal waits for one).
	barrier bool
	// report, when set, is an operation nobody waits for
	// (FinishCallLater): the writer hands it the operation's error.
	report func(error)
	// accepted marks the begin of a read-only call (BeginReadCall), checked
	// by its caller: the writer answers it at once (done is closed) and its
	// entry is pending; written says the entry is committed.
	accepted, written bool
	// touch: an accepted begin moves the session's last_seen_at.
	touch bool
	// queued is when the writer took an accepted begin (its entry may
	// wait for its outcome until readLinger after).
	queued time.Time
	// writeErr is why an accepted begin's entry could not be written (its
	// caller, answered already, reads err).
	writeErr error
	// finishOf is the read-only call a FinishReadCall completes; an
	// outcome that arrives while that entry is pending is merged into it,
	// with its report in finishReport.
	finishOf     *journalOp
	finishReport func(error)
	// projectID and identityID name the caller of a begin.
	projectID, identityID string
	at                    time.Time
	entry                 JournalEntry
	// results
	session Session
	err     error
	// done is closed when the results are set, for the caller who waits
	// (journal); nil for an operation nobody waits for.
	done chan struct{}
}

// answered closes op.done, when somebody waits for it.
func (op *journalOp) answered() {
	if op.done != nil {
		close(op.done)
	}
}

// errStoreClosed answers operations that arrive after Close.
var errStoreClosed = fault.New(fault.Unavailable, "store: the control plane is closed")

// journal queues op for the writer and waits for its outcome (unless op
// has a report function, which gets it instead, or is an accepted begin).
func (s *Store) journal(ctx context.Context, op *journalOp) error {
	waits := op.report == nil && !op.accepted
	if waits {
		op.done = make(chan struct{})
	}
	s.journalMu.RLock()
	if s.journalClosed {
		s.journalMu.RUnlock()
		return errStoreClosed
	}
	select {
	case s.journalQ <- op:
	case <-ctx.Done():
		s.journalMu.RUnlock()
		return fault.Wrap(fault.Timeout, ctx.Err(), "store: journal call")
	}
	s.journalMu.RUnlock()
	if !waits {
		// Nobody waits for it: queued, it keeps its place (the writer
		// takes the queue in order), and an accepted begin has its answer.
		return nil
	}
	// Once queued, the operation is written whatever the caller does:
	// waiting for it keeps the journal and the caller's view the same.
	<-op.done
	return op.err
}

// closeJournal stops the writer once it has written everything queued
// (Close); later calls are refused.
func (s *Store) closeJournal() {
	s.journalMu.Lock()
	if !s.journalClosed {
		s.journalClosed = true
		close(s.journalQ)
	}
	s.journalMu.Unlock()
	<-s.journalDone
}

// runJournal is the writer goroutine; it ends when closeJournal has closed
// the queue and the queue is drained (what is pending written too).
//
// What nobody waits for — outcomes queued by FinishCallLater and
// FinishReadCall, and the entries of the read-only calls the writer
// accepted — is pending: it waits up to readLinger, then rides in one
// transaction, unless an operation somebody waits for comes first and
// takes it along, or nothing comes for readIdle while no read-only call
// the writer took runs (its outcome is sure to come). Under load a commit
// carries the entries and outcomes of many calls, and an outcome that comes
// while its entry is pending is written with it, in the same INSERT.
func (s *Store) runJournal() {
	defer close(s.journalDone)
	defer s.jconn.close()
	batch := make([]*journalOp, 0, maxJournalBatch)
	var pending []*journalOp
	due := time.NewTimer(readLinger)
	due.Stop()
	idle := time.NewTimer(readIdle)
	idle.Stop()
	// running counts the read-only calls accepted and not finished yet:
	// while there are any, their outcomes are sure to come, and the idle
	// write waits for them (or for due).
	running := 0
	for {
		var op *journalOp
		ok := true
		if len(pending) > 0 {
			select {
			case op, ok = <-s.journalQ:
			case <-due.C:
				idle.Stop()
				pending = s.flushDue(pending, due, false)
				continue
			case <-idle.C:
				if running > 0 {
					// Calls still run: the writer is not idle, their
					// outcomes will come. due writes what is pending.
					continue
				}
				due.Stop()
				pending = s.flushDue(pending, due, false)
				continue
			}
		} else {
			op, ok = <-s.journalQ
		}
		if !ok {
			s.flush(pending, nil)
			return
		}
		hadPending := len(pending) > 0
		batch = s.collect(append(batch[:0], op))
		for _, op := range batch {
			switch {
			case op.accepted:
				running++
			case op.finishOf != nil:
				running--
			}
		}
		batch, pending = s.admit(batch, pending)
		if len(batch) == 0 && len(pending) < maxJournalBatch {
			if len(pending) > 0 {
				if !hadPending {
					due.Reset(readLinger)
				}
				idle.Reset(readIdle)
			}
			continue
		}
		due.Stop()
		idle.Stop()
		if len(batch) == 0 {
			pending = s.flushDue(pending, due, true)
			continue
		}
		pending = s.flush(pending, batch)
	}
}

// flushDue writes what is pending but the entries of read-only calls still
// running that may wait for their outcome (holdBack), so that the outcome
// goes in the entry's INSERT instead of an UPDATE of its own; full, it
// writes everything when nothing could be written otherwise. It returns
// what is left, with due set to write it when the oldest of it is
// readLinger old: each entry is written within readLinger, and under load
// a write comes at most every holdFor.
func (s *Store) flushDue(pending []*journalOp, due *time.Timer, full bool) []*journalOp {
	now := time.Now()
	write, keep := holdBack(pending, now)
	if len(write) == 0 && full {
		write, keep = pending, nil
	}
	s.flush(write, nil)
	if len(keep) == 0 {
		clear(pending)
		return pending[:0]
	}
	// What is kept is younger than holdFor: the next write comes when the
	// oldest of it is readLinger old, holdFor from now at the soonest.
	oldest := keep[0].queued
	for _, op := range keep {
		if op.queued.Before(oldest) {
			oldest = op.queued
		}
	}
	due.Reset(readLinger - now.Sub(oldest))
	n := copy(pending, keep)
	clear(pending[n:])
	return pending[:n]
}

// holdBack splits pending, in order, into what to write now and what may
// wait: the entries of read-only calls still running (no outcome yet),
// queued less than holdFor before now, and of each session every entry
// after the first of those (a session's entries are written in the order
// of its calls, which gives their Seqs). Everything else is written.
func holdBack(pending []*journalOp, now time.Time) (write, keep []*journalOp) {
	var held map[string]bool
	for _, op := range pending {
		if !op.accepted {
			continue
		}
		if !op.entry.Done && now.Sub(op.queued) < holdFor {
			if held == nil {
				held = map[string]bool{}
			}
			held[op.entry.SessionID] = true
		}
	}
	if held == nil {
		return pending, nil
	}
	// A held session's entries up to its last one that must go (done or
	// old) are written, running or not: they come before it.
	last := map[string]int{}
	for i, op := range pending {
		if op.accepted && held[op.entry.SessionID] && (op.entry.Done || now.Sub(op.queued) >= holdFor) {
			last[op.entry.SessionID] = i
		}
	}
	write = make([]*journalOp, 0, len(pending))
	for i, op := range pending {
		if op.accepted && held[op.entry.SessionID] {
			if l, ok := last[op.entry.SessionID]; !ok || i > l {
				keep = append(keep, op)
				continue
			}
		}
		write = append(write, op)
	}
	return write, keep
}

// readLinger is how long what nobody waits for may wait in memory for
// company: what a crash can lose of the journal. readIdle ends the wait
// sooner when nothing more comes and no read-only call runs: a quiet
// gateway writes within milliseconds, a busy one in batches of up to
// readLinger.
//
// It is the audit writer's linger: every read-only call is in the audit
// log too, which a crash can lose the last auditLinger of already, so the
// journal keeps the same window. Under load the writer commits about once
// per holdFor (or per maxJournalBatch operations), and each commit costs a
// transaction, the pages it dirties written to the WAL, and a read of the
// next session check (whose snapshot the commit ends): at 20 ms the
// journal's commits cost an MCP read about as much as its rows
// (docs/performance.md, eleventh pass).
const (
	readLinger = auditLinger
	readIdle   = 2 * time.Millisecond
	// holdFor is how old the entry of a call still running may be to wait
	// past a write for its outcome (flushDue): half of readLinger, so the
	// write that takes it comes readLinger after its call at the latest,
	// and at least holdFor after the write it waited past.
	holdFor = readLinger / 2
)

// admit sorts batch: the begins of read-only calls join pending (and their
// callers are answered), outcomes of pending entries are merged into them,
// other operations nobody waits for join pending. It returns the
// operations somebody waits for, to write now, in batch's backing array,
// and pending.
func (s *Store) admit(batch, pending []*journalOp) ([]*journalOp, []*journalOp) {
	out := batch[:0]
	for _, op := range batch {
		switch {
		case op.finishOf != nil && !op.finishOf.written:
			b := op.finishOf
			switch {
			case b.writeErr != nil || b.err != nil:
				// The entry could not be written: its outcome cannot be
				// either.
				op.err = cmp.Or(b.writeErr, b.err)
				if op.report != nil {
					op.report(op.err)
				}
			default:
				b.entry.Done, b.entry.Outcome, b.entry.Message = true, op.entry.Outcome, op.entry.Message
				b.entry.Rows, b.entry.Duration = op.entry.Rows, op.entry.Duration
				b.finishReport = op.report
			}
			op.answered()
		case op.finishOf != nil:
			// Written already: an outcome like FinishCallLater's.
			op.entry.SessionID, op.entry.Seq = op.finishOf.entry.SessionID, op.finishOf.entry.Seq
			pending = append(pending, op)
		case op.accepted:
			op.queued = time.Now()
			pending = append(pending, op)
			op.answered()
		case op.report != nil:
			// Nobody waits for it.
			pending = append(pending, op)
		default:
			out = append(out, op)
		}
	}
	return out, pending
}

// flush writes pending, then batch, in one transaction (writeJournal), and
// answers: the callers of batch, and the reports of the outcomes merged
// into pending entries when the write failed. It returns pending emptied.
func (s *Store) flush(pending, batch []*journalOp) []*journalOp {
	if len(pending)+len(batch) == 0 {
		return pending
	}
	all := make([]*journalOp, 0, len(pending)+len(batch))
	all = append(append(all, pending...), batch...)
	s.writeJournal(all)
	for _, op := range all {
		if op.accepted {
			op.written = op.writeErr == nil
			if op.writeErr != nil && op.finishReport != nil {
				op.finishReport(op.writeErr)
			}
			continue
		}
		if op.begin && op.err == nil {
			op.written = true
		}
		if op.report != nil && op.err != nil {
			op.report(op.err)
		}
		op.answered()
	}
	clear(pending)
	s.checkpointJournal()
	return pending[:0]
}

// collect appends the operations queued already to batch, up to
// maxJournalBatch.
func (s *Store) collect(batch []*journalOp) []*journalOp {
	for len(batch) < maxJournalBatch {
		select {
		case op, ok := <-s.journalQ:
			if !ok {
				return batch
			}
			batch = append(batch, op)
		default:
			return batch
		}
	}
	return batch
}

// writeJournal writes a batch in one transaction. When the transaction
// fails as a whole (the database went away, a deadlock on a shared
// PostgreSQL store), each operation is tried again in a transaction of its
// own, so that each gets its own outcome.
func (s *Store) writeJournal(batch []*journalOp) {
	ctx := context.WithoutCancel(s.closing)
	batch = slices.DeleteFunc(slices.Clone(batch), func(op *journalOp) bool { return op.barrier })
	if len(batch) == 0 {
		return
	}
	if len(batch) > 1 {
		// Prepared before the transaction begins (see hotQueries).
		for _, q := range finishUpdates {
			_, _ = s.stmt(ctx, q)
		}
		err := s.recordJournal(ctx, "store: journal calls", func(tx querier) error {
			if err := s.lockSessions(ctx, tx, batch); err != nil {
				return err
			}
			// The accepted entries come first (flush puts pending
			// first), session by session.
			if err := s.appendAccepted(ctx, tx, batch); err != nil {
				return err
			}
			return s.applyRest(ctx, tx, batch)
		})
		if err == nil {
			journalCounts.commits.Add(1)
			return
		}
		// What the writer remembers of the sessions may be what the
		// failed transaction wrote: read them again.
		clear(s.seen)
	}
	for _, op := range batch {
		if op.accepted {
			// Its caller has its answer (op.err is the caller's): the
			// outcome of the write is writeErr.
			op.writeErr = s.recordJournal(ctx, "store: journal call", func(tx querier) error {
				if err := s.lockSessions(ctx, tx, []*journalOp{op}); err != nil {
					return err
				}
				return s.applyJournal(ctx, tx, op)
			})
			if op.writeErr != nil {
				clear(s.seen)
			} else {
				journalCounts.commits.Add(1)
			}
			continue
		}
		op.err = nil
		err := s.recordJournal(ctx, "store: journal call", func(tx querier) error {
			if err := s.lockSessions(ctx, tx, []*journalOp{op}); err != nil {
				return err
			}
			return s.applyJournal(ctx, tx, op)
		})
		if err != nil {
			clear(s.seen)
			if op.err == nil {
				op.err = err
			}
		} else {
			journalCounts.commits.Add(1)
		}
	}
}

// lockSessions takes, in the order of their ids (two replicas never wait
// on each other in a circle), the row locks of the sessions that begin
// calls, so that calls of one session take turns and never get the same
// Seq. SQLite needs none: its write transactions are exclusive.
func (s *Store) lockSessions(ctx context.Context, tx querier, batch []*journalOp) error {
	if s.dia.lockSession == "" {
		return nil
	}
	var ids []string
	for _, op := range batch {
		if op.begin {
			ids = append(ids, op.entry.SessionID)
		}
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if _, err := tx.ExecContext(ctx, s.dia.lockSession, id); err != nil {
			return err
		}
	}
	return nil
}

// applyJournal writes op inside tx. A refusal of op alone — the session
// refusing the call, an unknown entry — goes to op.err and writes nothing
// for op; a database error is returned and fails the transaction.
//
// A begin in a session the writer has seen (s.seen) is one statement,
// insertLiveCall, which checks the session as it appends; the session is
// read only the first time, and when that statement refuses, to say why.
func (s *Store) applyJournal(ctx context.Context, tx querier, op *journalOp) error {
	e := &op.entry
	if !op.begin {
		journalCounts.updates.Add(1)
		res, err := tx.ExecContext(ctx, finishCall, e.Outcome, e.Message, e.Rows, int64(e.Duration), e.SessionID, e.Seq)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			op.err = fault.New(fault.NotFound, "journal entry %d of session %q not found", e.Seq, e.SessionID)
		}
		return nil
	}
	stamp := op.at.UnixNano()
	if op.accepted {
		return s.applyAccepted(ctx, tx, op)
	}
	ss, seen := s.seen[e.SessionID]
	if seen {
		err := tx.QueryRowContext(ctx, insertLiveCall, e.SessionID, e.Tool, e.Arguments, stamp,
			e.SessionID, op.identityID, op.projectID, stamp).Scan(&e.Seq)
		if err == nil {
			return s.touched(ctx, tx, op, ss)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		delete(s.seen, e.SessionID)
	}
	ss, err := oneSession(ctx, tx, e.SessionID)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			op.err = &SessionRefused{Reason: RefusedUnknown}
			return nil
		}
		return err
	}
	if r := ss.Refuses(op.projectID, op.identityID, op.at); r != 0 {
		op.err = &SessionRefused{Reason: r, Session: ss}
		return nil
	}
	if err := tx.QueryRowContext(ctx, insertCall, e.SessionID, e.Tool, e.Arguments, stamp, e.SessionID).Scan(&e.Seq); err != nil {
		return err
	}
	if len(s.seen) >= maxSeenSessions {
		clear(s.seen)
	}
	return s.touched(ctx, tx, op, ss)
}

// applyAccepted writes the entry of a read-only call the writer accepted
// (BeginReadCall), with its outcome when it has one, alone. The call has
// run: when the session refuses it by now (ended through another Store in
// the moment since its caller read it), the entry is written all the same.
func (s *Store) applyAccepted(ctx context.Context, tx querier, op *journalOp) error {
	e := &op.entry
	stamp := op.at.UnixNano()
	var outcome sql.NullString
	if e.Done {
		outcome = sql.NullString{String: e.Outcome, Valid: true}
	}
	err := tx.QueryRowContext(ctx, insertLiveDone, e.SessionID, e.Tool, e.Arguments, stamp, outcome, e.Message, e.Rows, int64(e.Duration),
		e.SessionID, op.identityID, op.projectID, stamp).Scan(&e.Seq)
	if err == nil {
		if op.touch {
			_, err = tx.ExecContext(ctx, touchSession, stamp, e.SessionID)
		}
		return err
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return tx.QueryRowContext(ctx, insertCallDone, e.SessionID, e.Tool, e.Arguments, stamp, outcome, e.Message, e.Rows, int64(e.Duration),
		e.SessionID).Scan(&e.Seq)
}

// appendAccepted writes the entries of the accepted read-only calls of
// batch, session by session: one read of the session's last Seq and of
// whether it still takes calls (not ended, same owner), then the entries
// with the Seqs that follow, in the order the calls were accepted, in a few
// multi-row INSERTs (insertEntries), and the session's last_seen_at moved once (not for a session
// that no longer takes calls). The calls have run: a session ended through
// another Store since their callers read it gets its entries all the same.
func (s *Store) appendAccepted(ctx context.Context, tx querier, batch []*journalOp) error {
	var order []string
	groups := map[string][]*journalOp{}
	for _, op := range batch {
		if op.accepted {
			id := op.entry.SessionID
			if groups[id] == nil {
				order = append(order, id)
			}
			groups[id] = append(groups[id], op)
		}
	}
	for _, id := range order {
		g := groups[id]
		var last int64
		var live bool
		if err := tx.QueryRowContext(ctx, sessionTail, id, id, g[0].identityID, g[0].projectID).Scan(&last, &live); err != nil {
			return err
		}
		var touch *journalOp
		for i, op := range g {
			op.entry.Seq = last + int64(i) + 1
			if op.touch {
				touch = op
			}
		}
		if err := insertEntries(ctx, tx, g); err != nil {
			return err
		}
		if !live {
			continue
		}
		if touch != nil {
			if _, err := tx.ExecContext(ctx, touchSession, touch.at.UnixNano(), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyRest writes the operations of batch but the accepted begins, in
// their order (applyJournal); a run of outcomes between two begins goes in
// a few multi-row UPDATEs (finishEntries).
func (s *Store) applyRest(ctx context.Context, tx querier, batch []*journalOp) error {
	var run []*journalOp
	for _, op := range batch {
		switch {
		case op.accepted:
			continue
		case !op.begin:
			run = append(run, op)
			continue
		}
		if err := s.finishEntries(ctx, tx, run); err != nil {
			return err
		}
		run = run[:0]
		if err := s.applyJournal(ctx, tx, op); err != nil {
			return err
		}
	}
	return s.finishEntries(ctx, tx, run)
}

// finishChunks are the numbers of rows of the multi-row UPDATEs of
// outcomes (finishEntries), largest first; finishUpdates their statements.
var (
	finishChunks  = []int{16, 4}
	finishUpdates = func() []string {
		q := make([]string, len(finishChunks))
		for i, n := range finishChunks {
			q[i] = finishCalls(n)
		}
		return q
	}()
)

// finishCalls is the UPDATE of the outcomes of n entries, each row of its
// VALUES an entry's session, Seq, outcome, message, rows_count and
// duration_ns. The CASTs type the integers of the VALUES for PostgreSQL;
// the columns of a VALUES list are named column1, column2, … on both.
func finishCalls(n int) string {
	return `UPDATE session_calls SET outcome = v.column3, message = v.column4, rows_count = v.column5, duration_ns = v.column6
FROM (VALUES (?, CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT))` +
		strings.Repeat(", (?, CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT))", n-1) +
		`) AS v WHERE session_calls.session_id = v.column1 AND session_calls.seq = v.column2`
}

// finishEntries writes the outcomes ops carry, in order, in as few UPDATEs
// as finishChunks allow. A chunk that updates fewer entries than it has
// rows — an unknown entry, or one entry's outcome twice — is written again
// an outcome at a time (applyJournal: the same values, the last outcome of
// an entry last, NotFound for an unknown one).
func (s *Store) finishEntries(ctx context.Context, tx querier, ops []*journalOp) error {
	if len(ops) < finishChunks[len(finishChunks)-1] {
		for _, op := range ops {
			if err := s.applyJournal(ctx, tx, op); err != nil {
				return err
			}
		}
		return nil
	}
	args := make([]any, 0, 6*min(len(ops), finishChunks[0]))
	for k, n := range finishChunks {
		for len(ops) >= n {
			args = args[:0]
			for _, op := range ops[:n] {
				e := &op.entry
				args = append(args, e.SessionID, e.Seq, e.Outcome, e.Message, e.Rows, int64(e.Duration))
			}
			journalCounts.updates.Add(1)
			res, err := tx.ExecContext(ctx, finishUpdates[k], args...)
			if err != nil {
				return err
			}
			updated, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if updated != int64(n) {
				for _, op := range ops[:n] {
					if err := s.applyJournal(ctx, tx, op); err != nil {
						return err
					}
				}
			}
			ops = ops[n:]
		}
	}
	for _, op := range ops {
		if err := s.applyJournal(ctx, tx, op); err != nil {
			return err
		}
	}
	return nil
}

// entryChunks are the multi-row INSERTs of the entries of one session
// (insertEntries), largest first; entryInserts all their statements, for
// prepareHot.
var (
	entryChunks  = []entryChunk{entryChunkOf(16), entryChunkOf(4), entryChunkOf(1)}
	entryInserts = func() []string {
		var q []string
		for _, c := range entryChunks {
			q = append(q, c.shared)
			if c.each != "" {
				q = append(q, c.each)
			}
		}
		return q
	}()
)

// entryChunk is the INSERT of n entries of a session that share their tool,
// outcome and message (shared: the common chunk, a burst of one tool's
// calls that went well), and the INSERT of n entries of a session (each;
// "" for one entry, whose values are all shared). The session, and in
// shared the shared values, are bound once for the chunk, as values of the
// SELECT over the VALUES of the rows (a bound text costs the SQLite driver
// a C allocation and a copy, and a bound value a Go one); the VALUES are
// the outer and only loop, which SQLite runs as a co-routine (joined to a
// one-row SELECT of the shared values, it would copy them into a
// temporary table first). The CASTs type the integers of the VALUES for
// PostgreSQL; the columns of a VALUES list are named column1, column2, …
// on both.
type entryChunk struct {
	n            int
	shared, each string
}

func entryChunkOf(n int) entryChunk {
	const cols = `INSERT INTO session_calls (session_id, seq, tool, arguments, started_at, outcome, message, rows_count, duration_ns)
`
	c := entryChunk{n: n, shared: cols + `SELECT ?, v.column1, ?, v.column2, v.column3, ?, ?, v.column4, v.column5
FROM (VALUES ` + repeatRow(n, "(CAST(? AS BIGINT), ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))") + `) AS v`}
	if n > 1 {
		c.each = cols + `SELECT ?, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8
FROM (VALUES ` + repeatRow(n, "(CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT))") + `) AS v`
	}
	return c
}

// repeatRow is n copies of row, comma-separated.
func repeatRow(n int, row string) string {
	return row + strings.Repeat(", "+row, n-1)
}

// insertEntries writes the entries of ops, all of one session, their Seqs
// set, in as few prepared INSERTs as entryChunks allow.
func insertEntries(ctx context.Context, tx querier, ops []*journalOp) error {
	if len(ops) == 0 {
		return nil
	}
	args := make([]any, 0, 1+8*min(len(ops), entryChunks[0].n))
	session := any(ops[0].entry.SessionID)
	// Runs of equal strings (a tool, the same arguments, "ok") share one
	// boxed value.
	var tool, arguments, outcome, message boxed
	for _, c := range entryChunks {
		for len(ops) >= c.n {
			chunk := ops[:c.n]
			ops = ops[c.n:]
			args = append(args[:0], session)
			query := c.shared
			if c.each == "" || sameOutcomes(chunk) {
				e := &chunk[0].entry
				args = append(args, tool.of(e.Tool), outcomeValue(&outcome, e), message.of(e.Message))
				for _, op := range chunk {
					e := &op.entry
					args = append(args, e.Seq, arguments.of(e.Arguments), op.at.UnixNano(), e.Rows, int64(e.Duration))
				}
			} else {
				query = c.each
				for _, op := range chunk {
					e := &op.entry
					args = append(args, e.Seq, tool.of(e.Tool), arguments.of(e.Arguments), op.at.UnixNano(), outcomeValue(&outcome, e),
						message.of(e.Message), e.Rows, int64(e.Duration))
				}
			}
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameOutcomes reports whether the entries of ops share their tool and
// outcome (done or not, and its code and message).
func sameOutcomes(ops []*journalOp) bool {
	f := &ops[0].entry
	for _, op := range ops[1:] {
		e := &op.entry
		if e.Tool != f.Tool || e.Done != f.Done || e.Outcome != f.Outcome || e.Message != f.Message {
			return false
		}
	}
	return true
}

// outcomeValue is the outcome column of e: NULL while the call runs.
func outcomeValue(b *boxed, e *JournalEntry) any {
	if !e.Done {
		return nil
	}
	return b.of(e.Outcome)
}

// maxSeenSessions bounds the writer's memory of sessions.
const maxSeenSessions = 10000

// touched completes a begin whose entry is written: last_seen_at moves in
// steps of touchStep (a burst of calls writes it once, and an idle timeout
// is at most that much late), and op gets the session as it now is.
func (s *Store) touched(ctx context.Context, tx querier, op *journalOp, ss Session) error {
	if op.at.Sub(ss.LastSeenAt) >= touchStep || op.at.Before(ss.LastSeenAt) {
		if _, err := tx.ExecContext(ctx, touchSession, op.at.UnixNano(), op.entry.SessionID); err != nil {
			return err
		}
		ss.LastSeenAt = op.entry.StartedAt
	}
	s.seen[op.entry.SessionID] = ss
	op.session = ss
	return nil
}

// recordJournal is record for the journal writer: on SQLite it runs fn in
// a transaction on the writer's own connection (journalConn), on
// PostgreSQL in one of the pool's, where a transaction costs its round
// trips rather than database/sql's work.
func (s *Store) recordJournal(ctx context.Context, op string, fn func(tx querier) error) error {
	if s.dia.name != sqliteDialect.name {
		return s.record(ctx, op, func(tx *sql.Tx) error { return fn(prepared{s, tx}) })
	}
	w := &s.jconn
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.begin(ctx, s.db); err != nil {
		return dbErr(err, "%s", op)
	}
	if err := fn(w); err != nil {
		w.rollback(ctx)
		var fe *fault.Error
		if errors.As(err, &fe) {
			return err
		}
		return dbErr(err, "%s", op)
	}
	if _, err := w.ExecContext(ctx, commitTx); err != nil {
		w.rollback(ctx)
		return dbErr(err, "%s", op)
	}
	return nil
}

// The statements that bracket a transaction on the writer's connection;
// BEGIN IMMEDIATE takes SQLite's write lock at once, as the pool's
// transactions do (_txlock=immediate).
const (
	beginTx    = `BEGIN IMMEDIATE`
	commitTx   = `COMMIT`
	rollbackTx = `ROLLBACK`
)

// journalConn is the SQLite connection the journal writer's transactions
// run on, only from the writer goroutine: BEGIN IMMEDIATE, COMMIT,
// ROLLBACK and the writer's statements prepared on it once. A transaction
// of database/sql's costs, each time, a goroutine and a context to watch
// it, the driver's parse of its BEGIN and its COMMIT (each with a
// goroutine of its own watching the context), and a statement bound to the
// transaction per statement run; on the writer's hot path, one commit per
// batch of calls, that was a tenth of its CPU. A transaction that fails is
// rolled back; when the ROLLBACK fails too, the connection may be left in
// any state and is let go (database/sql closes it), and the next
// transaction takes a new one.
type journalConn struct {
	// mu is held while the connection is used: by the writer alone, but
	// its checkpoint (checkpointJournal) runs after its callers have their
	// answers, which may be the tests that drive writeJournal themselves.
	mu   sync.Mutex
	conn *sql.Conn
	// stmts are the statements prepared on conn, by query.
	stmts map[string]*sql.Stmt
	// auto: conn checkpoints inside its commits, as SQLite's own (while
	// the wal-index header is not mapped: checkpointJournal).
	auto bool
}

// begin begins a transaction, on a new connection when there is none.
func (w *journalConn) begin(ctx context.Context, db *sql.DB) error {
	if w.conn == nil {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		w.conn, w.stmts, w.auto = conn, map[string]*sql.Stmt{}, false
		// Its commits leave the write-ahead log's checkpoint to the other
		// connections (checkpointJournal).
		_, _ = w.conn.ExecContext(ctx, noAutoCheckpoint)
		// Prepared before the transaction begins: the write lock is then
		// held only while writing.
		for _, q := range journalConnQueries {
			w.stmt(ctx, q)
		}
	}
	if _, err := w.ExecContext(ctx, beginTx); err != nil {
		// A connection that could not begin may be left in any state:
		// rollback lets it go unless a ROLLBACK succeeds.
		w.rollback(ctx)
		return err
	}
	return nil
}

// journalConnQueries are prepared on the writer's connection when it is
// taken.
var journalConnQueries = slices.Concat([]string{beginTx, commitTx, rollbackTx}, hotQueries, entryInserts, finishUpdates)

// rollback ends the transaction begun on the connection, if any; when
// that fails, the connection is let go.
func (w *journalConn) rollback(ctx context.Context) {
	if w.conn == nil {
		return
	}
	if _, err := w.ExecContext(ctx, rollbackTx); err != nil {
		w.drop()
	}
}

// drop lets the connection go: database/sql closes it rather than pooling
// it again.
func (w *journalConn) drop() {
	if w.conn == nil {
		return
	}
	w.closeStmts()
	_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = w.conn.Close()
	w.conn = nil
}

// close hands the connection back to the pool (the writer stops; no
// transaction is open then), with SQLite's checkpoint as the pool's
// connections have it.
func (w *journalConn) close() {
	if w.conn == nil {
		return
	}
	w.closeStmts()
	if _, err := w.conn.ExecContext(context.Background(), autoCheckpoint); err != nil {
		_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = w.conn.Close()
	w.conn = nil
}

func (w *journalConn) closeStmts() {
	for q, st := range w.stmts {
		st.Close()
		delete(w.stmts, q)
	}
}

// stmt returns query prepared on the connection, preparing it on first
// use; nil when it cannot be (it then runs unprepared, so its error is
// the one running it gives).
func (w *journalConn) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := w.stmts[query]; ok {
		return st
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	w.stmts[query] = st
	return st
}

func (w *journalConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := w.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return w.conn.QueryRowContext(ctx, query, args...)
}

func (w *journalConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := w.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return w.conn.QueryContext(ctx, query, args...)
}

func (w *journalConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := w.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return w.conn.ExecContext(ctx, query, args...)
}

// On SQLite every commit appends the pages it changed to the write-ahead
// log, and SQLite checkpoints it — copies it back into control.db, with an
// fsync of each — inside the commit that makes it checkpointFrames pages
// long (wal_autocheckpoint). Under load that was one journal commit every
// few seconds taking 20-90 ms instead of a few, and the write tools whose
// entries rode in it waited as long. The writer's connection leaves that
// checkpoint to the Store's other connections (the audit writer's,
// which commits whenever calls are made, and the pool's), whose callers
// wait for nobody, and checks the log's length after each write, its
// callers answered: should the log reach journalCheckpointAt pages
// because nothing else committed, the writer checkpoints it itself.

const (
	// checkpointFrames is SQLite's threshold (wal_autocheckpoint's
	// default): about 4 MB of log.
	checkpointFrames = 1000
	// journalCheckpointAt is the length at which the writer checkpoints:
	// the other connections checkpoint at checkpointFrames, on their next
	// commit.
	journalCheckpointAt = 2 * checkpointFrames
)

// The pragmas of the writer's connection, and its own checkpoint.
const (
	noAutoCheckpoint  = `PRAGMA wal_autocheckpoint = 0`
	autoCheckpoint    = `PRAGMA wal_autocheckpoint = 1000`
	journalCheckpoint = `PRAGMA wal_checkpoint(PASSIVE)`
)

// walMaxFrame is the word of the wal-index header (walHeader) that holds
// the log's last valid frame: its length in pages.
const walMaxFrame = 4

// journalCheckpoints counts, over the process, the checkpoints the
// journal writer ran itself, for the tests.
var journalCheckpoints atomic.Int64

// checkpointJournal checkpoints the log on the writer's connection when it
// is journalCheckpointAt pages long or more. The length is read from the
// wal-index header the session checker maps, which the read-only calls
// that fill the journal map; when it is not mapped, the writer's
// connection checkpoints as SQLite's own would (checkpointJournal turns
// it back on), so the log is bounded either way.
func (s *Store) checkpointJournal() {
	w := &s.jconn
	if s.dia.name != sqliteDialect.name {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return
	}
	ctx := context.WithoutCancel(s.closing)
	h, ok := s.checker.header()
	if !ok {
		if !w.auto {
			if _, err := w.conn.ExecContext(ctx, autoCheckpoint); err == nil {
				w.auto = true
			}
		}
		return
	}
	if w.auto {
		if _, err := w.conn.ExecContext(ctx, noAutoCheckpoint); err == nil {
			w.auto = false
		}
	}
	if h[walMaxFrame] < journalCheckpointAt {
		return
	}
	var busy, frames, done int64
	if w.conn.QueryRowContext(ctx, journalCheckpoint).Scan(&busy, &frames, &done) == nil {
		journalCheckpoints.Add(1)
	}
}
