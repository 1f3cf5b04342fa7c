package engine

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/store"
)

type dbKey struct{ project, typ, schema string }

// source is one registered database and its cached tables.
type source struct {
	db  store.Database
	cfg dialects.Config

	// mu guards the fields below; it is never held while the database is
	// dialed or introspected (see load), so a database that does not
	// answer holds up only the calls that need it, each until its own
	// deadline.
	mu       sync.Mutex
	src      dialects.Source
	tables   map[string]known
	loadedAt time.Time
	tried    time.Time
	loading  *loadRun // the open-and-introspect in flight, nil when none
	closed   bool

	// stats is the open source's dialects.Stats, if it has the ability,
	// readable without mu: a scrape must not wait behind an introspection
	// of a database that does not answer.
	stats atomic.Pointer[statsBox]
}

type statsBox struct{ dialects.Stats }

// known is a table as the source's last load found it, with the names of
// its columns in order, made once per load: a read of every column (the
// projection validate fills in) shares them instead of making its own.
type known struct {
	t     *dialects.Table
	names []string // len == cap: an append to a plan's copy never writes here
}

// Registry is what the engine reads of the control plane: the registered
// databases, every project's policy, custom API definitions, and when to
// read them again. *store.Store is the one the server uses; tests of the
// engine alone give their own.
type Registry interface {
	// ChangeSeq moves whenever a registration, a policy or a lock changes.
	ChangeSeq(ctx context.Context) (int64, error)
	// Changes hints at once that ChangeSeq may have moved (it may never
	// send; the engine polls as well).
	Changes(ctx context.Context) <-chan struct{}
	Databases(ctx context.Context) ([]store.Database, error)
	Orgs(ctx context.Context) ([]store.Org, error)
	Projects(ctx context.Context, orgID string) ([]store.Project, error)
	Policy(ctx context.Context, projectID string) (store.Policy, error)
	CustomAPIs(ctx context.Context, projectID string) ([]store.CustomAPI, error)
	CustomAPIsAt(ctx context.Context, projectID, uri string) ([]store.CustomAPI, error)
}

// catalog maps registered databases to live sources and cached tables.
type catalog struct {
	st  Registry
	cfg Config
	log *slog.Logger

	authz *permissions.Authorizer

	mu      sync.RWMutex
	seq     int64
	loaded  bool
	sources map[dbKey]*source
	// names maps project ids to "org/project", for metric labels.
	names map[string]string
}

func newCatalog(st Registry, cfg Config, log *slog.Logger, authz *permissions.Authorizer) *catalog {
	return &catalog{st: st, cfg: cfg, log: log, seq: -1, sources: map[dbKey]*source{}, authz: authz}
}

// sync reloads registrations and locks when the store's change counter moved.
func (c *catalog) sync(ctx context.Context) error {
	seq, err := c.st.ChangeSeq(ctx)
	if err != nil {
		return err
	}
	c.mu.RLock()
	same := c.loaded && seq == c.seq
	c.mu.RUnlock()
	if same {
		return nil
	}
	dbs, err := c.st.Databases(ctx)
	if err != nil {
		return err
	}
	if err := c.loadPolicies(ctx); err != nil {
		return err
	}

	next := make(map[dbKey]*source, len(dbs))
	var closing []*source
	c.mu.Lock()
	for _, d := range dbs {
		k := dbKey{d.ProjectID, d.Type, d.Schema}
		if old, ok := c.sources[k]; ok && old.db.ID == d.ID && old.db.UpdatedAt.Equal(d.UpdatedAt) {
			next[k] = old
			continue
		} else if ok && old.db.ID == d.ID && old.db.DSN == d.DSN {
			// Touched (store.TouchDatabase): the same database, its
			// tables to be read again; the pool stays.
			old.forget()
			old.db.UpdatedAt = d.UpdatedAt
			next[k] = old
			continue
		}
		next[k] = &source{db: d, cfg: dialects.Config{
			DSN: d.DSN, Schema: d.Schema,
			StatementTimeout: c.cfg.StatementTimeout, MaxConns: c.cfg.MaxConns,
			AcquireTimeout: c.cfg.AcquireTimeout,
		}}
		c.log.Info("database registered", "project", d.ProjectID, "type", d.Type, "schema", d.Schema)
	}
	for k, old := range c.sources {
		if next[k] != old {
			closing = append(closing, old)
			c.log.Info("database unregistered", "project", k.project, "type", k.typ, "schema", k.schema)
		}
	}
	c.sources, c.seq, c.loaded = next, seq, true
	c.mu.Unlock()
	for _, s := range closing {
		s.close()
	}
	return nil
}

// changes returns the store's change hints (store.Changes), on which Run
// syncs at once instead of waiting for its next poll. The poll stays: a
// hint can be missed, and on SQLite other processes send none.
func (c *catalog) changes(ctx context.Context) <-chan struct{} {
	return c.st.Changes(ctx)
}

// loadPolicies hands every project's policy to the authorizer. A policy
// that does not compile keeps the previous one in force and is logged.
func (c *catalog) loadPolicies(ctx context.Context) error {
	orgs, err := c.st.Orgs(ctx)
	if err != nil {
		return err
	}
	all := map[string]store.Policy{}
	names := map[string]string{}
	for _, o := range orgs {
		projs, err := c.st.Projects(ctx, o.ID)
		if err != nil {
			return err
		}
		for _, p := range projs {
			pol, err := c.st.Policy(ctx, p.ID)
			if err != nil {
				return err
			}
			all[p.ID] = pol
			names[p.ID] = o.Abbr + "/" + p.Abbr
		}
	}
	c.mu.Lock()
	c.names = names
	c.mu.Unlock()
	if err := c.authz.Load(all); err != nil {
		c.log.Error("policy not loaded; the previous policy stays in force", "err", err)
	}
	return nil
}

func (c *catalog) get(projectID, typ, schema string) *source {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sources[dbKey{projectID, typ, schema}]
}

// list returns the project's sources.
func (c *catalog) list(projectID string) []*source {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*source
	for k, s := range c.sources {
		if k.project == projectID {
			out = append(out, s)
		}
	}
	return out
}

func (c *catalog) closeAll() {
	c.mu.Lock()
	srcs := c.sources
	c.sources = map[dbKey]*source{}
	c.loaded = false
	c.mu.Unlock()
	for _, s := range srcs {
		s.close()
	}
}

// loadRun is one open-and-introspect of a source, shared by every caller
// that needs it while it runs.
type loadRun struct {
	done chan struct{}
	err  error
}

func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.src != nil {
		s.stats.Store(nil)
		_ = s.src.Close()
		s.src = nil
	}
}

// load opens the source if it is not open and introspects its tables. One
// load runs at a time per source, in its own goroutine bounded by
// loadTimeout, and concurrent callers share it (a burst against a database
// that does not answer dials once); each caller waits only until its own
// ctx is done. The error is the load's, or the caller's deadline.
func (s *source) load(ctx context.Context, loadTimeout time.Duration) error {
	s.mu.Lock()
	l := s.loading
	if l == nil {
		l = &loadRun{done: make(chan struct{})}
		s.loading = l
		go s.run(l, loadTimeout)
	}
	s.mu.Unlock()
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return fault.Wrap(fault.Timeout, ctx.Err(), "database %s/%s did not answer in time", s.db.Type, s.db.Schema)
	}
}

// run is one load: nothing is locked while the database is dialed or
// introspected.
func (s *source) run(l *loadRun, loadTimeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	err := s.runLoad(ctx)
	if err != nil && ctx.Err() != nil {
		err = fault.Wrap(fault.Timeout, err, "database %s/%s did not answer within %s", s.db.Type, s.db.Schema, loadTimeout)
	}
	s.mu.Lock()
	s.loading = nil
	s.mu.Unlock()
	l.err = err
	close(l.done)
}

func (s *source) runLoad(ctx context.Context) error {
	s.mu.Lock()
	src, closed := s.src, s.closed
	s.mu.Unlock()
	if closed {
		return fault.New(fault.Unavailable, "database %s/%s was unregistered", s.db.Type, s.db.Schema)
	}
	if src == nil {
		opened, err := dialects.Open(ctx, s.db.Type, s.cfg)
		if err != nil {
			if fault.KindOf(err) != fault.Internal {
				return err
			}
			return fault.Wrap(fault.Unavailable, err, "database %s/%s is unavailable", s.db.Type, s.db.Schema)
		}
		s.mu.Lock()
		if s.closed { // unregistered while dialing
			s.mu.Unlock()
			_ = opened.Close()
			return fault.New(fault.Unavailable, "database %s/%s was unregistered", s.db.Type, s.db.Schema)
		}
		s.src, src = opened, opened
		if st, ok := opened.(dialects.Stats); ok {
			s.stats.Store(&statsBox{st})
		}
		s.mu.Unlock()
	}
	tried := time.Now()
	ts, err := src.Tables(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tried = tried
	if err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Unavailable, err, "database %s/%s is unavailable", s.db.Type, s.db.Schema)
		}
		return err
	}
	m := make(map[string]known, len(ts))
	for i := range ts {
		t := &ts[i]
		names := make([]string, len(t.Columns))
		for j, c := range t.Columns {
			names[j] = c.Name
		}
		m[t.Name] = known{t: t, names: names}
	}
	s.tables, s.loadedAt = m, time.Now()
	return nil
}

// open returns the live source, loading it on first use.
func (s *source) open(ctx context.Context, loadTimeout time.Duration) (dialects.Source, error) {
	s.mu.Lock()
	src := s.src
	s.mu.Unlock()
	if src != nil {
		return src, nil
	}
	err := s.load(ctx, loadTimeout)
	s.mu.Lock()
	src = s.src
	s.mu.Unlock()
	if src == nil {
		if err == nil {
			err = fault.New(fault.Unavailable, "database %s/%s is unavailable", s.db.Type, s.db.Schema)
		}
		return nil, err
	}
	return src, nil
}

// table resolves a table, loading the source when it is not open, when the
// cache is empty or older than refresh, or (at most every minMiss) when
// the table is missing. A failed refresh keeps serving the last known
// shape: the query itself will tell.
func (s *source) table(ctx context.Context, name string, refresh, minMiss, loadTimeout time.Duration) (dialects.Source, known, error) {
	s.mu.Lock()
	now := time.Now()
	_, ok := s.tables[name]
	need := s.src == nil || s.tables == nil || now.Sub(s.loadedAt) > refresh || (!ok && now.Sub(s.tried) > minMiss)
	s.mu.Unlock()
	var err error
	if need {
		err = s.load(ctx, loadTimeout)
	}
	s.mu.Lock()
	src, loaded := s.src, s.tables != nil
	k, ok := s.tables[name]
	s.mu.Unlock()
	if src == nil || !loaded {
		if err == nil {
			err = fault.New(fault.Unavailable, "database %s/%s is unavailable", s.db.Type, s.db.Schema)
		}
		return nil, known{}, err
	}
	if !ok {
		return nil, known{}, errNoTable
	}
	return src, k, nil
}

// allTables lists the source's tables, loading them if needed.
func (s *source) allTables(ctx context.Context, refresh, loadTimeout time.Duration) ([]*dialects.Table, error) {
	s.mu.Lock()
	need := s.src == nil || s.tables == nil || time.Since(s.loadedAt) > refresh
	s.mu.Unlock()
	var err error
	if need {
		err = s.load(ctx, loadTimeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables == nil {
		if err == nil {
			err = fault.New(fault.Unavailable, "database %s/%s is unavailable", s.db.Type, s.db.Schema)
		}
		return nil, err
	}
	out := make([]*dialects.Table, 0, len(s.tables))
	for _, k := range s.tables {
		out = append(out, k.t)
	}
	return out, nil
}

var errNoTable = fault.New(fault.NotFound, "table not found")

// PoolStat is the pool of one registered database.
type PoolStat struct {
	// Database is "org/project/type/schema".
	Database string
	// ID is the registration's id (store.Database.ID), which names no
	// tenant.
	ID string
	dialects.PoolStats
}

// Pools reports the pools of the registered databases that are open and
// whose dialect reports its pool (dialects.Stats), sorted by Database. It
// never waits on a database.
func (e *Engine) Pools() []PoolStat {
	c := e.cat
	c.mu.RLock()
	var out []PoolStat
	for k, s := range c.sources {
		box := s.stats.Load()
		if box == nil {
			continue
		}
		name, ok := c.names[k.project]
		if !ok {
			name = k.project
		}
		out = append(out, PoolStat{Database: name + "/" + k.typ + "/" + k.schema, ID: s.db.ID, PoolStats: box.PoolStats()})
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Database < out[j].Database })
	return out
}
