package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// Session is an AI session of the MCP face: started by one identity, named
// and described by the agent, and kept alive by use until it is ended or has
// been idle longer than IdleTimeout.
type Session struct {
	// ID is the store-assigned UUID, sent back by agents as X-Session-Id.
	ID string
	// ProjectID and IdentityID name the owner; Identity is its name, filled
	// when read.
	ProjectID, IdentityID, Identity string
	// Name and Context are what the agent said about its work.
	Name, Context string
	// IdleTimeout is how long the session survives without a call; 0 means
	// it never idles out and lasts until it is ended.
	IdleTimeout time.Duration
	// StartedAt and LastSeenAt are set by the store (UTC); LastSeenAt moves
	// with every call begun in the session.
	StartedAt, LastSeenAt time.Time
	// EndedAt is when the session was ended; zero while it is open.
	EndedAt time.Time
	// Transport is the MCP transport session (Mcp-Session-Id) the session
	// was started on, "" for none. CreateSession stores it; reads leave it
	// empty (SessionOfTransport finds a session by it).
	Transport string
}

// ExpiresAt is when an open session idles out if no call comes first, and
// false when it never does (no idle timeout, or already ended).
func (s Session) ExpiresAt() (time.Time, bool) {
	if s.IdleTimeout == 0 || !s.EndedAt.IsZero() {
		return time.Time{}, false
	}
	return s.LastSeenAt.Add(s.IdleTimeout), true
}

// JournalEntry is one tool call of a session. It is written before the tool
// runs and completed after it.
type JournalEntry struct {
	// SessionID and Seq identify the call; Seq counts from 1 per session.
	SessionID string
	Seq       int64
	// Tool is the tool name and Arguments its arguments as the JSON text the
	// agent sent.
	Tool, Arguments string
	// StartedAt is when the call was journaled, before the tool ran.
	StartedAt time.Time
	// Done is false while the call runs (or if the process stopped before it
	// finished); the fields below are set when it is true.
	Done bool
	// Outcome is "ok" or the error code; Message the caller-safe error text.
	Outcome, Message string
	// Rows counts the rows read or affected (entries, for listings).
	Rows int64
	// Duration is how long the tool ran.
	Duration time.Duration
}

// record runs fn in a transaction like write, but leaves the change counter
// alone. Sessions and their journal are records, not configuration: no
// server caches them, and moving the counter on every tool call would make
// every server reload its catalog and policies for nothing (and turn the
// counter's single row into a hot spot on a shared PostgreSQL store).
func (s *Store) record(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err, "%s", op)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return err
		}
		return dbErr(err, "%s", op)
	}
	if err := tx.Commit(); err != nil {
		return dbErr(err, "%s", op)
	}
	return nil
}

const sessionCols = `s.id, s.project_id, s.identity_id, i.name, s.name, s.context, s.idle_ns, s.started_at, s.last_seen_at, s.ended_at`

const sessionFrom = ` FROM sessions s JOIN identities i ON i.id = s.identity_id`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var ss Session
	var idle, started, seen int64
	var ended sql.NullInt64
	if err := row.Scan(&ss.ID, &ss.ProjectID, &ss.IdentityID, &ss.Identity, &ss.Name, &ss.Context,
		&idle, &started, &seen, &ended); err != nil {
		return Session{}, err
	}
	ss.IdleTimeout = time.Duration(idle)
	ss.StartedAt = fromNanos(started)
	ss.LastSeenAt = fromNanos(seen)
	if ended.Valid {
		ss.EndedAt = fromNanos(ended.Int64)
	}
	return ss, nil
}

// CreateSession stores a new open session for in.IdentityID in
// in.ProjectID and returns it with ID, Identity, StartedAt and LastSeenAt
// set. An identity that is not a member of the project is fault.NotFound; a
// negative IdleTimeout fault.Invalid.
func (s *Store) CreateSession(ctx context.Context, in Session) (Session, error) {
	if in.IdleTimeout < 0 {
		return Session{}, fault.New(fault.Invalid, "session idle timeout is negative")
	}
	id, err := newID()
	if err != nil {
		return Session{}, err
	}
	out := in
	out.ID = id
	out.EndedAt = time.Time{}
	var stamp int64
	out.StartedAt, stamp = now()
	out.LastSeenAt = out.StartedAt
	err = s.record(ctx, "store: create session", func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT name FROM identities WHERE id = ? AND project_id = ?`,
			in.IdentityID, in.ProjectID).Scan(&out.Identity); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fault.New(fault.NotFound, "identity id %q not found in this project", in.IdentityID)
			}
			return err
		}
		var transport sql.NullString
		if in.Transport != "" {
			transport = sql.NullString{String: in.Transport, Valid: true}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, project_id, identity_id, name, context, idle_ns, started_at, last_seen_at, transport_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, in.ProjectID, in.IdentityID, in.Name, in.Context, int64(in.IdleTimeout), stamp, stamp, transport)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return out, nil
}

// SessionByID returns a session, or fault.NotFound.
func (s *Store) SessionByID(ctx context.Context, id string) (Session, error) {
	return oneSession(ctx, s.db, id)
}

func oneSession(ctx context.Context, q querier, id string) (Session, error) {
	ss, err := scanSession(q.QueryRowContext(ctx, selectSession, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fault.New(fault.NotFound, "session %q not found", id)
	}
	if err != nil {
		return Session{}, dbErr(err, "store: read session")
	}
	return ss, nil
}

// SessionOfTransport returns the id of the newest session of identityID in
// projectID started on the MCP transport session transport, live or not,
// and "" when there is none.
func (s *Store) SessionOfTransport(ctx context.Context, projectID, identityID, transport string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM sessions WHERE transport_id = ? AND project_id = ? AND identity_id = ?
ORDER BY started_at DESC, id DESC LIMIT 1`, transport, projectID, identityID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", dbErr(err, "store: read transport session")
	}
	return id, nil
}

// EndSession marks an open session ended at the given time. An unknown or
// already ended session is fault.NotFound.
func (s *Store) EndSession(ctx context.Context, id string, at time.Time) error {
	return s.record(ctx, "store: end session", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL`, at.UnixNano(), id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "no open session %q", id))
	})
}

// CallStart is a tool call to journal: who calls, in which session, when,
// and what.
type CallStart struct {
	SessionID, ProjectID, IdentityID string
	At                               time.Time
	Tool, Arguments                  string
}

// Refusal says why a session takes no call (Session.Refuses).
type Refusal int

const (
	// RefusedUnknown: no such session, or one another identity owns.
	RefusedUnknown Refusal = iota + 1
	// RefusedEnded: the session has been ended.
	RefusedEnded
	// RefusedExpired: the session went idle longer than its IdleTimeout.
	RefusedExpired
)

// SessionRefused is the error BeginCall refuses a call with. Session is the
// session as read (zero when Reason is RefusedUnknown).
type SessionRefused struct {
	Reason  Refusal
	Session Session
}

func (e *SessionRefused) Error() string {
	switch e.Reason {
	case RefusedEnded:
		return "store: session " + e.Session.ID + " has ended"
	case RefusedExpired:
		return "store: session " + e.Session.ID + " has expired"
	}
	return "store: session not found"
}

// Refuses tells why ss takes no call of identity identityID in project
// projectID at at, or 0 when it takes it. BeginCall applies this rule, in
// SQL too (insertLiveCall holds the same conditions).
func (ss Session) Refuses(projectID, identityID string, at time.Time) Refusal {
	switch {
	case ss.ID == "" || ss.IdentityID != identityID || ss.ProjectID != projectID:
		return RefusedUnknown
	case !ss.EndedAt.IsZero():
		return RefusedEnded
	}
	if exp, ok := ss.ExpiresAt(); ok && !at.Before(exp) {
		return RefusedExpired
	}
	return 0
}

// BeginCall journals a call: when the session takes it (Session.Refuses),
// it moves LastSeenAt to c.At when that is a second or more behind and
// appends the entry with the next Seq, in one transaction, which the
// journal writer may share with other calls' (journal_writer.go). It
// returns once the entry is committed, with the session as updated and the
// entry as stored. A session that refuses the call is a *SessionRefused and
// nothing is written.
func (s *Store) BeginCall(ctx context.Context, c CallStart) (Session, JournalEntry, error) {
	op := &journalOp{begin: true, at: c.At, projectID: c.ProjectID, identityID: c.IdentityID,
		entry: JournalEntry{SessionID: c.SessionID, Tool: c.Tool, Arguments: c.Arguments, StartedAt: time.Unix(0, c.At.UnixNano()).UTC()}}
	if err := s.journal(ctx, op); err != nil {
		return Session{}, JournalEntry{}, err
	}
	return op.session, op.entry, nil
}

// ReadCall is the journal entry of a read-only call (BeginReadCall),
// which may be written after the call is answered.
type ReadCall struct {
	// op is the call's begin, queued for the journal writer: one
	// allocation for both.
	op journalOp
}

// BeginReadCall is BeginCall for a call that only reads (the tool writes
// nowhere): the session is read and checked as BeginCall checks it
// (Session.Refuses, at c.At; a refusal is a *SessionRefused), so a session
// ended or moved through another Store or replica refuses the call at
// once, but nothing is written before it returns. The entry is queued for
// the journal writer, which writes it within readLinger with the entries of
// the calls around it, and with its outcome when FinishReadCall comes
// first. The entry keeps its place: Journal, FlushJournal and Close write
// it before anything after them. What a crash loses is the entries not
// written yet. The entry's Seq is known once written: finish the call with
// FinishReadCall. The session returned (and the one of a refusal) holds
// what the check reads: ID, ProjectID, IdentityID, IdleTimeout, StartedAt,
// LastSeenAt and EndedAt, not Identity, Name or Context (its own row, no
// join). The read is shared by the calls that arrive while another is in
// flight, and starts after they all arrived (checkSession).
func (s *Store) BeginReadCall(ctx context.Context, c CallStart) (Session, *ReadCall, error) {
	ss, err := s.checkSession(ctx, c.SessionID)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return Session{}, nil, &SessionRefused{Reason: RefusedUnknown}
		}
		return Session{}, nil, err
	}
	// Calls this Store accepted and has not written yet moved the session
	// on too.
	if v, ok := s.lastCall.Load(c.SessionID); ok {
		if t := v.(time.Time); t.After(ss.LastSeenAt) {
			ss.LastSeenAt = t
		}
	}
	if r := ss.Refuses(c.ProjectID, c.IdentityID, c.At); r != 0 {
		return Session{}, nil, &SessionRefused{Reason: r, Session: ss}
	}
	rc := &ReadCall{op: journalOp{begin: true, accepted: true, at: c.At, projectID: c.ProjectID, identityID: c.IdentityID,
		entry: JournalEntry{SessionID: c.SessionID, Tool: c.Tool, Arguments: c.Arguments, StartedAt: time.Unix(0, c.At.UnixNano()).UTC()}}}
	op := &rc.op
	if c.At.Sub(ss.LastSeenAt) >= touchStep || c.At.Before(ss.LastSeenAt) {
		op.touch = true
		ss.LastSeenAt = op.entry.StartedAt
		s.noteCall(c.SessionID, ss.LastSeenAt)
	}
	if err := s.journal(ctx, op); err != nil {
		return Session{}, nil, err
	}
	return ss, rc, nil
}

// noteCall remembers at as the latest LastSeenAt an accepted read-only call
// gave session id (BeginReadCall), a bounded memory: forgetting only costs
// a touch written again.
func (s *Store) noteCall(id string, at time.Time) {
	if s.lastCalls.Add(1) > maxSeenSessions {
		s.lastCall.Clear()
		s.lastCalls.Store(0)
	}
	s.lastCall.Store(id, at)
}

// FinishReadCall records the outcome of a call begun by BeginReadCall,
// like FinishCallLater: without waiting, report (when not nil) receiving
// the error if the entry or its outcome cannot be written.
func (s *Store) FinishReadCall(rc *ReadCall, outcome, message string, rows int64, d time.Duration, report func(error)) {
	if report == nil {
		report = func(error) {}
	}
	if outcome == "" {
		report(fault.New(fault.Invalid, "journal outcome is empty"))
		return
	}
	err := s.journal(context.Background(), &journalOp{report: report, finishOf: &rc.op, entry: JournalEntry{Done: true,
		Outcome: outcome, Message: message, Rows: rows, Duration: d}})
	if err != nil {
		report(err)
	}
}

// FlushJournal returns once every call and outcome queued before it is
// written (or failed to be).
func (s *Store) FlushJournal(ctx context.Context) error {
	return s.journal(ctx, &journalOp{barrier: true})
}

// FinishCall completes a journal entry written by BeginCall with its
// outcome ("ok" or an error code), message, rows and duration. An unknown
// entry is fault.NotFound.
func (s *Store) FinishCall(ctx context.Context, sessionID string, seq int64, outcome, message string, rows int64, d time.Duration) error {
	if outcome == "" {
		return fault.New(fault.Invalid, "journal outcome is empty")
	}
	return s.journal(ctx, &journalOp{entry: JournalEntry{SessionID: sessionID, Seq: seq, Done: true,
		Outcome: outcome, Message: message, Rows: rows, Duration: d}})
}

// FinishCallLater is FinishCall without the wait: the outcome is queued for
// the journal writer, which commits it with the calls that follow, and
// report, when not nil, receives the error if it cannot be written. Journal
// reads of this Store see every outcome queued before them.
func (s *Store) FinishCallLater(sessionID string, seq int64, outcome, message string, rows int64, d time.Duration, report func(error)) {
	if report == nil {
		report = func(error) {}
	}
	if outcome == "" {
		report(fault.New(fault.Invalid, "journal outcome is empty"))
		return
	}
	err := s.journal(context.Background(), &journalOp{report: report, entry: JournalEntry{SessionID: sessionID, Seq: seq, Done: true,
		Outcome: outcome, Message: message, Rows: rows, Duration: d}})
	if err != nil {
		report(err)
	}
}

// Journal returns the calls of a session in the order they were made,
// with every outcome queued by FinishCallLater before it. The result is
// never nil.
func (s *Store) Journal(ctx context.Context, sessionID string) ([]JournalEntry, error) {
	if err := s.FlushJournal(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, seq, tool, arguments, started_at, outcome, message, rows_count, duration_ns
FROM session_calls WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, dbErr(err, "store: read journal")
	}
	return collect(rows, scanJournalEntry, "store: read journal")
}

func scanJournalEntry(row interface{ Scan(...any) error }) (JournalEntry, error) {
	var e JournalEntry
	var started, dur int64
	var outcome sql.NullString
	if err := row.Scan(&e.SessionID, &e.Seq, &e.Tool, &e.Arguments, &started, &outcome, &e.Message, &e.Rows, &dur); err != nil {
		return JournalEntry{}, err
	}
	e.StartedAt = fromNanos(started)
	e.Done, e.Outcome = outcome.Valid, outcome.String
	e.Duration = time.Duration(dur)
	return e, nil
}
