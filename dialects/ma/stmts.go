package ma

import (
	"container/list"
	"context"
	"database/sql"
	"sync"
)

// stmtCacheSize bounds the statements kept prepared. database/sql prepares
// a cached *sql.Stmt once per connection that runs it, so the server holds
// up to stmtCacheSize × pool size statements (MySQL's global
// max_prepared_stmt_count defaults to 16382).
const stmtCacheSize = 128

// maxCachedSQL is the longest SQL text worth keeping prepared. Longer
// statements are large inserts, seldom repeated with the same row count;
// they are prepared, run and closed.
const maxCachedSQL = 8 << 10

// stmtCache keeps prepared statements by SQL text, least recently used
// evicted first. Without it database/sql would prepare, execute and close
// every statement (three messages, two round trips); with it a repeated
// statement costs one round trip. A statement in use is closed only when
// its last user releases it.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex
	byText map[string]*cachedStmt
	lru    list.List // of *cachedStmt, most recently used first
	closed bool
}

type cachedStmt struct {
	text    string
	stmt    *sql.Stmt
	refs    int
	evicted bool
	el      *list.Element
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, byText: map[string]*cachedStmt{}}
}

// get returns a prepared statement for text, to be handed back with put.
// ok is false when text is not worth caching: the caller runs it unprepared.
func (c *stmtCache) get(ctx context.Context, text string) (cs *cachedStmt, ok bool, err error) {
	if len(text) > maxCachedSQL {
		return nil, false, nil
	}
	c.mu.Lock()
	if cs := c.byText[text]; cs != nil {
		cs.refs++
		c.lru.MoveToFront(cs.el)
		c.mu.Unlock()
		return cs, true, nil
	}
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, false, nil
	}
	st, err := c.db.PrepareContext(ctx, text)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = st.Close()
		return nil, false, nil
	}
	if cs := c.byText[text]; cs != nil { // prepared meanwhile by another call
		_ = st.Close()
		cs.refs++
		c.lru.MoveToFront(cs.el)
		return cs, true, nil
	}
	cs = &cachedStmt{text: text, stmt: st, refs: 1}
	cs.el = c.lru.PushFront(cs)
	c.byText[text] = cs
	for c.lru.Len() > stmtCacheSize {
		c.evict(c.lru.Back().Value.(*cachedStmt))
	}
	return cs, true, nil
}

// put hands back a statement from get.
func (c *stmtCache) put(cs *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs.refs--
	if cs.evicted && cs.refs == 0 {
		_ = cs.stmt.Close()
	}
}

// evict drops cs from the cache; it is closed now or by its last user.
func (c *stmtCache) evict(cs *cachedStmt) {
	c.lru.Remove(cs.el)
	delete(c.byText, cs.text)
	cs.evicted = true
	if cs.refs == 0 {
		_ = cs.stmt.Close()
	}
}

// close drops every statement; later gets prepare nothing.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.lru.Len() > 0 {
		c.evict(c.lru.Front().Value.(*cachedStmt))
	}
}
