package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// The session check of read-only calls (BeginReadCall) reads the session
// from the store on every call, so that a session ended, idled out or moved
// through any Store or replica refuses the next call at once. Concurrent
// calls share reads: a call that arrives while a check read is in flight
// waits for the next one, which reads every session the calls waiting for
// it name in one statement (checkSessions). A read is shared only by calls
// that arrived before it started, so it is as fresh as a read of their own:
// it sees every commit made before each of them arrived.

// maxCheckIDs bounds the sessions one check read covers; the statements
// are prepared for 1, 2, 4, … maxCheckIDs ids (checkSizes), a smaller set
// padded with its first id.
const maxCheckIDs = 64

// checkSizes are the numbers of ids the check statements take.
var checkSizes = []int{1, 2, 4, 8, 16, 32, maxCheckIDs}

// checkSessions returns the check statement for n ids (n in checkSizes).
func checkSessions(n int) string {
	return `SELECT id, project_id, identity_id, idle_ns, started_at, last_seen_at, ended_at FROM sessions WHERE id IN (?` +
		strings.Repeat(", ?", n-1) + `)`
}

// checkQueries are the check statements by size, in the order of
// checkSizes.
var checkQueries = func() []string {
	q := make([]string, len(checkSizes))
	for i, n := range checkSizes {
		q[i] = checkSessions(n)
	}
	return q
}()

// checkTimeout bounds a check read on PostgreSQL (a connection that hangs
// must not hold every later check). A SQLite read is bounded by its busy
// timeout and runs without a context that can end, which spares the
// goroutines database/sql and the driver start to watch one.
const checkTimeout = 10 * time.Second

// sessionChecker groups the session reads of concurrent read-only calls.
type sessionChecker struct {
	mu sync.Mutex
	// reading is true while a read is in flight.
	reading bool
	// next gathers the calls that wait for the next read; nil when none
	// does.
	next *checkGroup
	// afterRead, when set (by tests), runs after each read, before its
	// calls are answered, with the ids it read.
	afterRead func(ids []string)
	// On SQLite the reads in flight one after the other (lead) run on a
	// connection of their own, conn, through the driver's statements
	// prepared on it (stmts, by size): database/sql's pool, its rows and
	// its conversions cost about as much as SQLite's read. Only the lead
	// read, one at a time, uses them; rawMu keeps Close (closeRaw) from
	// taking them away under it.
	rawMu  sync.Mutex
	closed bool
	conn   *sql.Conn
	stmts  []driver.Stmt
}

// checkGroup is one read and the calls that share it.
type checkGroup struct {
	ids   []string
	index map[string]int // id → position in ids, past a few ids
	// results, set before done is closed: found[i] is the session of
	// ids[i] (its ID empty when there is none), err the read's error.
	found []Session
	err   error
	done  chan struct{}
}

func (g *checkGroup) add(id string) {
	if g.index != nil {
		if _, ok := g.index[id]; !ok {
			g.index[id] = len(g.ids)
			g.ids = append(g.ids, id)
		}
		return
	}
	for _, have := range g.ids {
		if have == id {
			return
		}
	}
	g.ids = append(g.ids, id)
	if len(g.ids) > 8 {
		g.index = make(map[string]int, 2*len(g.ids))
		for i, have := range g.ids {
			g.index[have] = i
		}
	}
}

func (g *checkGroup) has(id string) bool {
	if g.index != nil {
		_, ok := g.index[id]
		return ok
	}
	for _, have := range g.ids {
		if have == id {
			return true
		}
	}
	return false
}

// session returns what the read found of id, and false when it found
// nothing.
func (g *checkGroup) session(id string) (Session, bool) {
	for _, ss := range g.found {
		if ss.ID == id {
			return ss, true
		}
	}
	return Session{}, false
}

// checkSession reads session id for a read-only call that arrived before
// the call: from a read of its own, or from one it shares with calls that
// arrived while another read was in flight, started after they all
// arrived. An unknown id is fault.NotFound. ctx bounds the wait, not the
// read, which others may share.
func (s *Store) checkSession(ctx context.Context, id string) (Session, error) {
	c := &s.checker
	c.mu.Lock()
	g := c.next
	if g == nil || (len(g.ids) >= maxCheckIDs && !g.has(id)) {
		if g != nil {
			// Full: it is read now, alongside the read in flight.
			c.next = nil
			go s.readGroup(g, false)
		}
		g = &checkGroup{done: make(chan struct{})}
		c.next = g
	}
	g.add(id)
	if !c.reading {
		// Nothing in flight: this call reads, for itself and whoever
		// joined before it took the lock.
		c.reading, c.next = true, nil
		c.mu.Unlock()
		s.readGroup(g, true)
	} else {
		c.mu.Unlock()
		select {
		case <-g.done:
		case <-ctx.Done():
			return Session{}, fault.Wrap(fault.Timeout, ctx.Err(), "store: read session")
		}
	}
	if g.err != nil {
		return Session{}, g.err
	}
	ss, ok := g.session(id)
	if !ok {
		return Session{}, fault.New(fault.NotFound, "session %q not found", id)
	}
	return ss, nil
}

// readGroup reads the sessions of g and answers its calls. The one read
// that runs as the checker's read in flight (lead) then starts the next
// group, if calls gathered meanwhile, or marks the checker idle.
func (s *Store) readGroup(g *checkGroup, lead bool) {
	if lead && s.dia.lockSession == "" {
		g.found, g.err = s.readSessionsRaw(g.ids)
	} else {
		g.found, g.err = s.readSessions(g.ids)
	}
	if h := s.checker.afterRead; h != nil {
		h(g.ids)
	}
	close(g.done)
	if !lead {
		return
	}
	c := &s.checker
	c.mu.Lock()
	next := c.next
	c.next = nil
	c.reading = next != nil
	c.mu.Unlock()
	if next != nil {
		go s.readGroup(next, true)
	}
}

// readSessionsRaw is readSessions on the checker's own SQLite connection,
// through the driver. When that connection fails it is let go, and the
// read runs again through the pool (a busy or failing database fails
// there too, with its own error).
func (s *Store) readSessionsRaw(ids []string) ([]Session, error) {
	c := &s.checker
	ctx := context.Background()
	c.rawMu.Lock()
	defer c.rawMu.Unlock()
	if c.closed {
		return s.readSessions(ids)
	}
	if c.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return s.readSessions(ids)
		}
		c.conn, c.stmts = conn, make([]driver.Stmt, len(checkSizes))
	}
	k, args := checkArgs(ids)
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	found := make([]Session, 0, len(ids))
	err := c.conn.Raw(func(dc any) error {
		st := c.stmts[k]
		if st == nil {
			prep, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return errNoRaw
			}
			var err error
			if st, err = prep.PrepareContext(ctx, checkQueries[k]); err != nil {
				return err
			}
			c.stmts[k] = st
		}
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			return errNoRaw
		}
		rows, err := q.QueryContext(ctx, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		row := make([]driver.Value, 7)
		for {
			if err := rows.Next(row); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			ss, err := rawSession(row)
			if err != nil {
				return err
			}
			found = append(found, ss)
		}
	})
	if err != nil {
		c.dropConn()
		return s.readSessions(ids)
	}
	return found, nil
}

// errNoRaw: the driver lacks what readSessionsRaw needs.
var errNoRaw = errors.New("store: the driver runs no prepared query with a context")

// closeRaw closes the checker's connection for good (Close).
func (c *sessionChecker) closeRaw() {
	c.rawMu.Lock()
	defer c.rawMu.Unlock()
	c.closed = true
	c.dropConn()
}

// dropConn closes the checker's connection and its statements, rawMu
// held.
func (c *sessionChecker) dropConn() {
	if c.conn == nil {
		return
	}
	_ = c.conn.Raw(func(any) error {
		for _, st := range c.stmts {
			if st != nil {
				st.Close()
			}
		}
		return nil
	})
	c.conn.Close()
	c.conn, c.stmts = nil, nil
}

// rawSession is a row of a check statement as the driver gives it.
func rawSession(row []driver.Value) (Session, error) {
	var ss Session
	var ok [7]bool
	ss.ID, ok[0] = rawText(row[0])
	ss.ProjectID, ok[1] = rawText(row[1])
	ss.IdentityID, ok[2] = rawText(row[2])
	var idle, started, seen int64
	idle, ok[3] = row[3].(int64)
	started, ok[4] = row[4].(int64)
	seen, ok[5] = row[5].(int64)
	switch v := row[6].(type) {
	case nil:
		ok[6] = true
	case int64:
		ss.EndedAt, ok[6] = fromNanos(v), true
	}
	for _, good := range ok {
		if !good {
			return Session{}, fmt.Errorf("store: a session row of unexpected types %T", row)
		}
	}
	ss.setTimes(idle, started, seen)
	return ss, nil
}

// setTimes sets the durations and times of a session read from its row
// (nanoseconds), but EndedAt.
func (ss *Session) setTimes(idle, started, seen int64) {
	ss.IdleTimeout = time.Duration(idle)
	ss.StartedAt = fromNanos(started)
	ss.LastSeenAt = fromNanos(seen)
}

func rawText(v driver.Value) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// checkArgs is the index in checkSizes of the statement for ids and its
// arguments: ids, padded with the first.
func checkArgs(ids []string) (int, []any) {
	k := 0
	for checkSizes[k] < len(ids) {
		k++
	}
	args := make([]any, checkSizes[k])
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	return k, args
}

// readSessions reads the sessions of ids (at most maxCheckIDs, distinct)
// in one statement: those found, in any order.
func (s *Store) readSessions(ids []string) ([]Session, error) {
	k, args := checkArgs(ids)
	ctx := context.Background()
	if s.dia.lockSession != "" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, checkTimeout)
		defer cancel()
	}
	rows, err := (prepared{s: s}).QueryContext(ctx, checkQueries[k], args...)
	if err != nil {
		return nil, dbErr(err, "store: read session")
	}
	defer rows.Close()
	found := make([]Session, 0, len(ids))
	for rows.Next() {
		var ss Session
		var idle, started, seen int64
		var ended sql.NullInt64
		if err := rows.Scan(&ss.ID, &ss.ProjectID, &ss.IdentityID, &idle, &started, &seen, &ended); err != nil {
			return nil, dbErr(err, "store: read session")
		}
		ss.setTimes(idle, started, seen)
		if ended.Valid {
			ss.EndedAt = fromNanos(ended.Int64)
		}
		found = append(found, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "store: read session")
	}
	return found, nil
}
