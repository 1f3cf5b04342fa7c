package store

import (
	"context"
	"database/sql"
	"slices"
)

// The hot paths of the store — the session journal, written twice per MCP
// tool call, and the reads of the MCP credential layer — run prepared
// statements: database/sql keeps each prepared on every connection that has
// run it, so a statement is parsed once per connection instead of once per
// call (with SQLite, parsing cost more than running).

// hotQueries are prepared when the store opens: a transaction only uses
// statements prepared before it began (preparing one needs a connection
// of the pool, and a transaction waiting for one while holding the write
// lock would stall every other writer).
var hotQueries = []string{selectSession, touchSession, insertCall, insertLiveCall, finishCall, insertLiveDone, insertCallDone, sessionTail}

const (
	selectSession = `SELECT ` + sessionCols + sessionFrom + ` WHERE s.id = ?`
	touchSession  = `UPDATE sessions SET last_seen_at = ? WHERE id = ?`
	// insertCall appends an entry with the session's next Seq.
	insertCall = `INSERT INTO session_calls (session_id, seq, tool, arguments, started_at)
SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM session_calls WHERE session_id = ? RETURNING seq`
	// insertLiveCall is insertCall for a session the journal writer has
	// read before: it appends the entry only when the session takes the
	// call (the conditions of Session.Refuses: owner, not ended, not idle
	// out at the call's time), so that the call needs no read of the
	// session. Arguments: session, tool, arguments, started_at, session,
	// identity, project, started_at.
	insertLiveCall = `INSERT INTO session_calls (session_id, seq, tool, arguments, started_at)
SELECT s.id, COALESCE((SELECT MAX(c.seq) FROM session_calls c WHERE c.session_id = ?), 0) + 1, ?, ?, ?
FROM sessions s WHERE s.id = ? AND s.identity_id = ? AND s.project_id = ? AND s.ended_at IS NULL
AND (s.idle_ns = 0 OR s.last_seen_at + s.idle_ns > ?) RETURNING seq`
	// insertLiveDone and insertCallDone are insertLiveCall and insertCall
	// with the outcome's columns (outcome NULL while the call runs), for
	// the entries of read-only calls written after the call was answered
	// (journal_writer.go). insertLiveDone's arguments: session, tool,
	// arguments, started_at, outcome, message, rows_count, duration_ns,
	// session, identity, project, started_at.
	insertLiveDone = `INSERT INTO session_calls (session_id, seq, tool, arguments, started_at, outcome, message, rows_count, duration_ns)
SELECT s.id, COALESCE((SELECT MAX(c.seq) FROM session_calls c WHERE c.session_id = ?), 0) + 1, ?, ?, ?, ?, ?, ?, ?
FROM sessions s WHERE s.id = ? AND s.identity_id = ? AND s.project_id = ? AND s.ended_at IS NULL
AND (s.idle_ns = 0 OR s.last_seen_at + s.idle_ns > ?) RETURNING seq`
	insertCallDone = `INSERT INTO session_calls (session_id, seq, tool, arguments, started_at, outcome, message, rows_count, duration_ns)
SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ? FROM session_calls WHERE session_id = ? RETURNING seq`
	// sessionTail is a session's last Seq (0 for none) and whether it
	// takes calls of an identity in a project: not ended. Arguments:
	// session, session, identity, project.
	sessionTail = `SELECT (SELECT COALESCE(MAX(seq), 0) FROM session_calls WHERE session_id = ?),
EXISTS (SELECT 1 FROM sessions WHERE id = ? AND identity_id = ? AND project_id = ? AND ended_at IS NULL)`
	finishCall = `UPDATE session_calls SET outcome = ?, message = ?, rows_count = ?, duration_ns = ?
WHERE session_id = ? AND seq = ?`
)

// prepareHot prepares hotQueries and the dialect's session lock. One that
// fails to prepare runs unprepared (and fails there, with its error).
func (s *Store) prepareHot(ctx context.Context) {
	for _, q := range append(append(append(slices.Clip(hotQueries), checkQueries...), entryInserts...), s.dia.lockSession) {
		if q != "" {
			_, _ = s.stmt(ctx, q)
		}
	}
}

// stmt returns the prepared statement of query, preparing it on first use.
// It must not be called inside a transaction (see hotQueries).
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// closeStmts closes the cached statements (Close).
func (s *Store) closeStmts() {
	s.stmts.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
}

// prepared is a querier running its statements through the store's
// prepared statements, inside tx when it is set. A statement that cannot be
// prepared runs unprepared, so its error is the one running it gives.
type prepared struct {
	s  *Store
	tx *sql.Tx
}

func (p prepared) plain() querier {
	if p.tx != nil {
		return p.tx
	}
	return p.s.db
}

func (p prepared) bound(ctx context.Context, query string) *sql.Stmt {
	if p.tx != nil {
		if st, ok := p.s.stmts.Load(query); ok {
			return p.tx.StmtContext(ctx, st.(*sql.Stmt))
		}
		return nil
	}
	st, err := p.s.stmt(ctx, query)
	if err != nil {
		return nil
	}
	return st
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.bound(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.plain().QueryRowContext(ctx, query, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.bound(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.plain().QueryContext(ctx, query, args...)
}

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.bound(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.plain().ExecContext(ctx, query, args...)
}
