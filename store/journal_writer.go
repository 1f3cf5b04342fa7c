package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// The journal writer: every BeginCall and FinishCall of the process is
// handed to one goroutine, which writes whatever has queued up in one
// transaction and then answers each caller. A caller still returns only
// once its entry is committed — the journal holds a call before the tool
// runs — but sixteen concurrent calls cost one commit instead of sixteen,
// and they no longer queue on the database's write lock one by one.

// touchStep is the granularity of a session's LastSeenAt.
const touchStep = time.Second

// maxJournalBatch bounds the operations of one transaction.
const maxJournalBatch = 64

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
	// projectID and identityID name the caller of a begin.
	projectID, identityID string
	at                    time.Time
	entry                 JournalEntry
	// results
	session Session
	err     error
	done    chan struct{}
}

// errStoreClosed answers operations that arrive after Close.
var errStoreClosed = fault.New(fault.Unavailable, "store: the control plane is closed")

// journal queues op for the writer and waits for its outcome (unless op
// has a report function, which gets it instead).
func (s *Store) journal(ctx context.Context, op *journalOp) error {
	op.done = make(chan struct{})
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
	if op.report != nil {
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
// the queue and the queue is drained.
//
// A batch that nobody waits for — outcomes queued by FinishCallLater only —
// lingers up to outcomeLinger for an operation somebody waits for, and
// rides in its transaction: under load every outcome shares the commit of a
// later call's entry instead of costing one of its own.
func (s *Store) runJournal() {
	defer close(s.journalDone)
	batch := make([]*journalOp, 0, maxJournalBatch)
	linger := time.NewTimer(outcomeLinger)
	linger.Stop()
	for op := range s.journalQ {
		batch = s.collect(append(batch[:0], op), nil)
		if !awaited(batch) && len(batch) < maxJournalBatch {
			linger.Reset(outcomeLinger)
			batch = s.collect(batch, linger.C)
			linger.Stop()
			batch = s.collect(batch, nil)
		}
		s.writeJournal(batch)
		for _, op := range batch {
			if op.report != nil && op.err != nil {
				op.report(op.err)
			}
			close(op.done)
		}
	}
}

// outcomeLinger is how long outcomes nobody waits for may wait for company.
const outcomeLinger = 2 * time.Millisecond

// collect appends queued operations to batch, up to maxJournalBatch: with
// until nil, those queued already; else it waits for more until until fires
// or an operation somebody waits for has come.
func (s *Store) collect(batch []*journalOp, until <-chan time.Time) []*journalOp {
	for len(batch) < maxJournalBatch {
		var op *journalOp
		ok := true
		if until == nil {
			select {
			case op, ok = <-s.journalQ:
			default:
				return batch
			}
		} else {
			select {
			case op, ok = <-s.journalQ:
			case <-until:
				return batch
			}
		}
		if !ok {
			return batch
		}
		batch = append(batch, op)
		if until != nil && op.report == nil {
			return batch
		}
	}
	return batch
}

// awaited reports whether somebody waits for an operation of batch.
func awaited(batch []*journalOp) bool {
	return slices.ContainsFunc(batch, func(op *journalOp) bool { return op.report == nil })
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
		err := s.record(ctx, "store: journal calls", func(tx *sql.Tx) error {
			if err := s.lockSessions(ctx, tx, batch); err != nil {
				return err
			}
			for _, op := range batch {
				if err := s.applyJournal(ctx, prepared{s, tx}, op); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
		// What the writer remembers of the sessions may be what the
		// failed transaction wrote: read them again.
		clear(s.seen)
	}
	for _, op := range batch {
		op.err = nil
		err := s.record(ctx, "store: journal call", func(tx *sql.Tx) error {
			if err := s.lockSessions(ctx, tx, []*journalOp{op}); err != nil {
				return err
			}
			return s.applyJournal(ctx, prepared{s, tx}, op)
		})
		if err != nil {
			clear(s.seen)
			if op.err == nil {
				op.err = err
			}
		}
	}
}

// lockSessions takes, in the order of their ids (two replicas never wait
// on each other in a circle), the row locks of the sessions that begin
// calls, so that calls of one session take turns and never get the same
// Seq. SQLite needs none: its write transactions are exclusive.
func (s *Store) lockSessions(ctx context.Context, tx *sql.Tx, batch []*journalOp) error {
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
		if _, err := (prepared{s, tx}).ExecContext(ctx, s.dia.lockSession, id); err != nil {
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
func (s *Store) applyJournal(ctx context.Context, tx prepared, op *journalOp) error {
	e := &op.entry
	if !op.begin {
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

// maxSeenSessions bounds the writer's memory of sessions.
const maxSeenSessions = 10000

// touched completes a begin whose entry is written: last_seen_at moves in
// steps of touchStep (a burst of calls writes it once, and an idle timeout
// is at most that much late), and op gets the session as it now is.
func (s *Store) touched(ctx context.Context, tx prepared, op *journalOp, ss Session) error {
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
