package mi

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

func init() { dialects.Register("mi", Open) }

// Source serves the tables of one mini-app scope directory. It rescans the
// directory on every Tables call and rereads a schema.yaml when the file
// changes, because mini-app-mcp or another gateway may add or change tables
// at any time. Each table file gets its own lazily opened *sql.DB. A Source
// is safe for concurrent use.
type Source struct {
	dir     string
	schema  string
	timeout time.Duration
	conns   int
	now     func() time.Time // the clock of writes; tests replace it

	mu      sync.Mutex
	closed  bool
	dbs     map[string]*tableDB // by table (directory) name
	schemas map[string]cachedSchema

	// aliasMu serializes the alias store's legacy migration, done once
	// (aliasesMigrated) per Source.
	aliasMu         sync.Mutex
	aliasesMigrated bool
}

// tableDB is one open table file. Writers of this process take turns on
// writeTurn, so they queue in Go instead of in SQLite's busy handler, whose
// growing sleeps make contended writes slow; the busy timeout still covers
// other processes (mini-app-mcp, another gateway).
type tableDB struct {
	db        *sql.DB
	writeTurn chan struct{}
}

// lockWrite waits for this table's write turn or for ctx to end.
func (t *tableDB) lockWrite(ctx context.Context) error {
	select {
	case t.writeTurn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *tableDB) unlockWrite() { <-t.writeTurn }

type cachedSchema struct {
	mod  time.Time
	size int64
	s    *schema
}

// Open opens the scope directory named by cfg.DSN (a path or file:// URL);
// cfg.Schema is the name the gateway shows for it. A missing directory is
// not an error (it simply has no tables yet, as in mini-app-mcp) but Ping
// reports it; a path that is not a directory is Invalid.
func Open(_ context.Context, cfg dialects.Config) (dialects.Source, error) {
	dir := trimFileURL(cfg.DSN)
	if dir == "" {
		return nil, fault.New(fault.Invalid, "mi: DSN must name a directory")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fault.New(fault.Invalid, "mi: %s is not a directory", dir)
	}
	return &Source{
		dir:     dir,
		schema:  cfg.Schema,
		timeout: cfg.StatementTimeout,
		conns:   cfg.MaxConns,
		now:     time.Now,
		dbs:     map[string]*tableDB{},
		schemas: map[string]cachedSchema{},
	}, nil
}

// Dialect returns the mi renderer.
func (s *Source) Dialect() dialects.Dialect { return Dialect{} }

// Tables lists every subdirectory holding a schema.yaml, sorted by name. A
// schema that does not parse is skipped with a warning, as mini-app-mcp
// skips it.
func (s *Source) Tables(ctx context.Context) ([]dialects.Table, error) {
	if s.isClosed() {
		return nil, errSourceClosed
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.Unavailable, err, "mi: cannot read the table directory")
	}
	var out []dialects.Table
	for _, e := range entries {
		if ctx.Err() != nil {
			return nil, storageErr(ctx, ctx.Err())
		}
		name := e.Name()
		if !safeName(name) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err != nil || !fi.IsDir() {
			continue // a stray file, or a dangling link
		}
		sc, err := s.loadSchema(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			slog.WarnContext(ctx, "mi: skipping table with unreadable schema.yaml", "dir", s.dir, "table", name, "err", err)
			continue
		}
		out = append(out, dialects.Table{Schema: s.schema, Name: name, Columns: append([]dialects.Column(nil), sc.columns...)})
	}
	return out, nil
}

// safeName keeps a request's table name inside the scope directory.
func safeName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && !strings.ContainsAny(name, `/\`) && filepath.Base(name) == name
}

// loadSchema returns the parsed schema.yaml of a table, reparsing it only
// when its size or modification time changed. A missing file is
// fs.ErrNotExist.
func (s *Source) loadSchema(name string) (*schema, error) {
	path := schemaFile(s.dir, name)
	fi, err := os.Stat(path)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fs.ErrNotExist
	}
	s.mu.Lock()
	c, ok := s.schemas[name]
	s.mu.Unlock()
	if ok && c.mod.Equal(fi.ModTime()) && c.size == fi.Size() {
		return c.s, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := parseSchema(b)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.schemas[name] = cachedSchema{mod: fi.ModTime(), size: fi.Size(), s: sc}
	s.mu.Unlock()
	return sc, nil
}

// table resolves a plan's table to its schema and open database.
func (s *Source) table(ctx context.Context, name string) (*schema, *tableDB, error) {
	if s.isClosed() {
		return nil, nil, errSourceClosed
	}
	if !safeName(name) {
		return nil, nil, notFound(name)
	}
	sc, err := s.loadSchema(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, notFound(name)
	}
	if err != nil {
		slog.WarnContext(ctx, "mi: table has an unreadable schema.yaml", "dir", s.dir, "table", name, "err", err)
		return nil, nil, notFound(name)
	}
	t, err := s.tableDB(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return sc, t, nil
}

// tableDB returns the open database of a table, opening (and creating,
// with the mini-app layout) its file on first use. It does not look at
// the schema: a batch creating a table fills its file before the
// schema.yaml is written.
func (s *Source) tableDB(ctx context.Context, name string) (*tableDB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errSourceClosed
	}
	if t, ok := s.dbs[name]; ok {
		return t, nil
	}
	db, err := openTableDB(ctx, dbFile(s.dir, name), s.conns)
	if err != nil {
		return nil, storageErr(ctx, err)
	}
	t := &tableDB{db: db, writeTurn: make(chan struct{}, 1)}
	s.dbs[name] = t
	return t, nil
}

// forgetDB closes a table's database, if open, so that its file can be
// removed.
func (s *Source) forgetDB(name string) {
	s.mu.Lock()
	t := s.dbs[name]
	delete(s.dbs, name)
	s.mu.Unlock()
	if t != nil {
		_ = t.db.Close()
	}
}

func (s *Source) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// withTimeout bounds a call by the configured statement timeout.
func (s *Source) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return context.WithCancel(ctx)
}

// Read runs a read plan and streams its rows, projected to p.Columns (all
// columns when empty) from the decoded data of each row.
func (s *Source) Read(ctx context.Context, p *query.Plan) (dialects.Rows, error) {
	if p == nil || p.Action != query.Read {
		return nil, fault.New(fault.Internal, "mi: Read needs a read plan")
	}
	if p.IsAggregate() {
		return s.readAggregate(ctx, p)
	}
	sc, t, err := s.table(ctx, p.Table)
	if err != nil {
		return nil, err
	}
	cols, err := projection(sc, p.Columns)
	if err != nil {
		return nil, err
	}
	var doc *docCell
	if p.Doc {
		doc = &docCell{}
		if p.DocKeys != nil {
			doc.keys = make(map[string]bool, len(p.DocKeys))
			for _, k := range p.DocKeys {
				doc.keys[k] = true
			}
		}
	}
	st, err := Dialect{}.Render(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.withTimeout(ctx)
	rs, err := t.db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		cancel()
		return nil, storageErr(ctx, err)
	}
	r := &rows{ctx: ctx, cancel: cancel, rs: rs, cols: cols, vals: make([]any, len(cols)), doc: doc, decode: doc == nil || doc.keys != nil}
	for _, c := range cols {
		r.decode = r.decode || !isBuiltin(c.Name)
	}
	if doc != nil {
		r.cols = append(r.cols, docColumn)
		r.vals = append(r.vals, nil)
	}
	return r, nil
}

// Documents reports that the source stores each row as one JSON document
// and takes document plans (dialects.DocumentStore): an insert or update
// carrying query.Plan.Docs stores them with every key, null and number
// literal kept, and a read with query.Plan.Doc answers the stored text.
func (s *Source) Documents() bool { return true }

// docColumn is the column of a row's stored document (query.DocColumn).
var docColumn = dialects.Column{Name: query.DocColumn, DBType: "TEXT", Kind: dialects.KindJSON}

// docCell is how a Doc read answers the stored document: byte for byte,
// or, with keys (query.Plan.DocKeys), re-encoded with only those keys.
type docCell struct{ keys map[string]bool }

// cell is the document cell of a row whose stored text is data and
// decoded object obj.
func (d *docCell) cell(data string, obj map[string]any) (any, error) {
	if d.keys == nil {
		return json.RawMessage(data), nil
	}
	kept := make(map[string]any, len(obj))
	for k, v := range obj {
		if d.keys[k] {
			kept[k] = v
		}
	}
	b, err := appendJSON(nil, kept)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// projection resolves the requested column names against the table.
func projection(sc *schema, names []string) ([]dialects.Column, error) {
	if len(names) == 0 {
		return append([]dialects.Column(nil), sc.columns...), nil
	}
	cols := make([]dialects.Column, len(names))
	for i, n := range names {
		c, ok := sc.column(n)
		if !ok {
			return nil, fault.New(fault.Invalid, "unknown column %q", n)
		}
		cols[i] = c
	}
	return cols, nil
}

// project fills vals with the cells of one row.
func project(cols []dialects.Column, vals []any, id string, data map[string]any, created, updated int64) {
	for i, c := range cols {
		switch c.Name {
		case colID:
			vals[i] = id
		case colCreatedAt:
			vals[i] = created
		case colUpdatedAt:
			vals[i] = updated
		default:
			vals[i] = cellOf(data[c.Name])
		}
	}
}

// rows streams a read, decoding each row's data as it is reached.
type rows struct {
	ctx    context.Context
	cancel context.CancelFunc
	rs     *sql.Rows
	cols   []dialects.Column
	vals   []any
	doc    *docCell // a Doc read: the last of cols is the document
	// decode: a cell needs the decoded data (a field is projected, or the
	// document is answered in part); a Doc read of the row's own columns
	// answers the stored text without decoding it.
	decode bool
	err    error
}

func (r *rows) Columns() []dialects.Column { return r.cols }

func (r *rows) Next() bool {
	if r.err != nil {
		return false
	}
	return r.rs.Next()
}

func (r *rows) Values() ([]any, error) {
	var (
		id, data         string
		created, updated int64
	)
	if err := r.rs.Scan(&id, &data, &created, &updated); err != nil {
		r.err = storageErr(r.ctx, err)
		return nil, r.err
	}
	var obj map[string]any
	if r.decode {
		var err error
		if obj, err = decodeObject(data); err != nil {
			r.err = fault.Wrap(fault.Internal, err, "row %s: stored data is not a JSON object", id)
			return nil, r.err
		}
	}
	if r.doc == nil {
		project(r.cols, r.vals, id, obj, created, updated)
		return r.vals, nil
	}
	n := len(r.cols) - 1
	project(r.cols[:n], r.vals[:n], id, obj, created, updated)
	var err error
	if r.vals[n], err = r.doc.cell(data, obj); err != nil {
		r.err = fault.Wrap(fault.Internal, err, "row %s: stored data cannot be answered as JSON", id)
		return nil, r.err
	}
	return r.vals, nil
}

func (r *rows) Err() error {
	if r.err != nil {
		return r.err
	}
	return storageErr(r.ctx, r.rs.Err())
}

func (r *rows) Close() error {
	err := r.rs.Close()
	r.cancel()
	return storageErr(r.ctx, err)
}

// Ping checks that the scope directory exists.
func (s *Source) Ping(ctx context.Context) error {
	if s.isClosed() {
		return errSourceClosed
	}
	fi, err := os.Stat(s.dir)
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, "mi: table directory is not reachable")
	}
	if !fi.IsDir() {
		return fault.New(fault.Unavailable, "mi: %s is not a directory", s.dir)
	}
	return nil
}

// Close closes every table file. Later calls answer Unavailable.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for name, t := range s.dbs {
		if err := t.db.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(s.dbs, name)
	}
	return errors.Join(errs...)
}

var (
	_ dialects.Source = (*Source)(nil)
	_ dialects.Rows   = (*rows)(nil)
)
