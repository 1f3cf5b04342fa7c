package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Config tunes the engine. Zero values take the defaults noted.
type Config struct {
	// StatementTimeout bounds every statement on a registered database (30s).
	StatementTimeout time.Duration
	// MaxConns bounds each database's pool (driver default when 0).
	MaxConns int
	// AcquireTimeout bounds the wait for a pooled connection of a database
	// whose dialect supports it (pg); past it the call answers 504 saying
	// the pool is exhausted. 0: only the request's deadline bounds it.
	AcquireTimeout time.Duration
	// PollInterval is how often the store's change counter is read (1s).
	PollInterval time.Duration
	// RefreshInterval is how long introspected tables are trusted (30s).
	RefreshInterval time.Duration
	// ConnectTimeout bounds opening a registered database and reading its
	// tables (15s). It runs apart from any request, shared by the requests
	// that wait for it, each of which gives up at its own deadline.
	ConnectTimeout time.Duration
	// MissRefresh is the least time between introspections caused by an
	// unknown table name (2s), so a new table shows up without a flood.
	MissRefresh time.Duration
	// Logger receives audit and catalog events.
	Logger *slog.Logger
	// Audit, when set, receives an entry for every data operation besides
	// its log line. Record must not block (store.AuditWriter queues).
	Audit Auditor
	// Refused, when set, is told of every refusal by a permission gate, in
	// the request's context; metrics count them by gate.
	Refused func(ctx context.Context, gate RefusalGate)
}

// Auditor keeps audit entries; store.AuditWriter is the one the server uses.
type Auditor interface {
	// Record takes an entry without blocking and reports whether it was
	// kept.
	Record(store.AuditEntry) bool
}

// RefusalGate names the permission gate that refused an operation.
type RefusalGate = permissions.Gate

// The gates, as the refusals metric labels them (see permissions.Gate).
const (
	GateLock     = permissions.GateLock
	GateTemplate = permissions.GateTemplate
	GateScope    = permissions.GateScope
	GateHidden   = permissions.GateHidden
)

func (c *Config) defaults() {
	if c.StatementTimeout == 0 {
		c.StatementTimeout = 30 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = 30 * time.Second
	}
	if c.MissRefresh == 0 {
		c.MissRefresh = 2 * time.Second
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = dialects.ProbeTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Engine executes plans for principals.
type Engine struct {
	cfg   Config
	cat   *catalog
	authz *permissions.Authorizer
	log   *slog.Logger
}

// New builds an engine over a store and loads the catalog once.
func New(ctx context.Context, st Registry, cfg Config) (*Engine, error) {
	cfg.defaults()
	authz, err := permissions.NewAuthorizer()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, authz: authz, cat: newCatalog(st, cfg, cfg.Logger, authz)}
	if err := e.cat.sync(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Run follows the store until ctx ends: registrations, removals, locks and
// policies take effect as soon as the store announces a write (every write
// on a PostgreSQL control plane, through LISTEN/NOTIFY; this process's own
// on SQLite), and within PollInterval otherwise.
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.cfg.PollInterval)
	defer t.Stop()
	wake := e.cat.changes(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil // the store was closed: the poll is all there is
			}
		}
		if err := e.cat.sync(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("catalog refresh failed", "err", err)
		}
	}
}

// Ready reports whether the catalog has been loaded from the store.
func (e *Engine) Ready() bool {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	return e.cat.loaded
}

// Close releases every database pool.
func (e *Engine) Close() { e.cat.closeAll() }

// Result is the answer of Execute. For a read, Rows streams the result and
// must be closed. For a write, RowsAffected and, for an insert where the
// dialect can return them, Returned rows in Columns order.
type Result struct {
	Action       query.Action
	Columns      []dialects.Column
	Rows         dialects.Rows
	RowsAffected int64
	Returned     [][]any
}

// Execute is the one road every data operation takes: tenancy, table
// resolution, permission gates, validation and coercion, rendering by the
// table's dialect, execution and audit. The plan is modified in place
// (coerced values, expanded projection).
//
// A statement the database refuses because a table or column it names no
// longer exists (dialects.ErrSchemaChanged) refreshes the database's
// tables at once; a read is then run again, once, from the plan as it was
// given, so it sees the table as it is now (a dropped column is left out
// of "every column", a column asked for by name is a 400); a write is not
// retried and answers 409.
func (e *Engine) Execute(ctx context.Context, p *auth.Principal, plan *query.Plan) (res *Result, err error) {
	if plan.Action != query.Read {
		return e.execute(ctx, p, plan, nil)
	}
	var again readAgain // in this frame: the second run is rare
	again.keep(plan)
	return e.execute(ctx, p, plan, &again)
}

// readAgain is a read's plan as it was given, kept to run the read again
// if the database's tables changed under it (Execute). A run changes its
// plan in place (coerced values, an expanded projection, the row scope
// ANDed in), so the request part is copied, as clonePlan copies it; but it
// is kept in the caller's frame, and a plan of its own is made only for
// the second run. A lone condition of at most one value (a read by key)
// is kept apart from the plan, in fields that point at nothing of the
// frame, so that the frame does not move to the heap.
type readAgain struct {
	plan query.Plan // its Where is nil when lone
	lone bool
	cond query.Cond // the lone condition; its Args are nil
	one  bool       // whether the lone condition has a value, arg
	arg  any
}

// keep copies the read p into a.
func (a *readAgain) keep(p *query.Plan) {
	a.plan = *p
	a.plan.Columns = slices.Clone(p.Columns)
	a.plan.Order = slices.Clone(p.Order)
	a.plan.Aggregates = slices.Clone(p.Aggregates)
	a.plan.GroupBy = slices.Clone(p.GroupBy)
	if x, ok := p.Where.(*query.Cond); ok && len(x.Args) <= 1 {
		a.plan.Where, a.lone, a.cond = nil, true, *x
		a.cond.Args = nil
		if len(x.Args) == 1 {
			a.one, a.arg = true, x.Args[0]
		}
	} else {
		a.plan.Where = cloneExpr(p.Where)
	}
	a.plan.Having = cloneExpr(p.Having)
}

// read is a plan of its own of the read a keeps.
func (a *readAgain) read() *query.Plan {
	c := clonePlan(&a.plan)
	if a.lone {
		cc := new(condCopy)
		cc.c = a.cond
		if a.one {
			cc.arg[0] = a.arg
			cc.c.Args = cc.arg[:1:1]
		}
		c.Where = &cc.c
	}
	return c
}

// execute is Execute; again, when not nil, keeps the read to run if the
// database's tables changed under this one.
func (e *Engine) execute(ctx context.Context, p *auth.Principal, plan *query.Plan, again *readAgain) (res *Result, err error) {
	start := time.Now()
	object := permissions.Object(plan.Type, plan.Schema, plan.Table)
	retried := false
	defer func() {
		if err != nil && !retried {
			e.audit(ctx, p, plan, object, 0, err, start)
		}
	}()
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	if plan.Org != p.Org || plan.Project != p.Project {
		return nil, fault.New(fault.Invalid, "org/project %q/%q in the path do not match the token's %q/%q", plan.Org, plan.Project, p.Org, p.Project)
	}
	var g grant // in this frame: nothing keeps it past the call
	if err := e.authorizeTo(ctx, p, plan, object, nil, &g); err != nil {
		return nil, err
	}
	src, tbl := g.src, g.view
	if err := prepareDocs(plan, &g); err != nil {
		return nil, err
	}
	if err := validateNames(plan, tbl, g.names); err != nil {
		return nil, err
	}
	if err := g.applyScope(ctx, plan); err != nil {
		if fault.KindOf(err) == fault.Forbidden {
			e.refused(ctx, nil, GateScope)
		}
		return nil, err
	}
	if err := e.writeOptions(ctx, p, plan, object, &g); err != nil {
		return nil, err
	}

	switch plan.Action {
	case query.Read:
		rows, err := src.Read(ctx, plan)
		// The answer, its rows and what their Close audits, in one
		// allocation.
		var rr *readResult
		if err == nil {
			rr = &readResult{rows: auditRows{e: e, ctx: ctx, p: p, plan: plan, object: object, start: start}}
			err = rr.rows.peekRows.prefetch(rows)
		}
		if errors.Is(err, dialects.ErrSchemaChanged) {
			e.schemaChanged(ctx, p, plan, err)
			if again != nil {
				retried = true
				return e.execute(ctx, p, again.read(), nil)
			}
		}
		if err != nil {
			return nil, err
		}
		rr.Result = Result{Action: plan.Action, Columns: rows.Columns(), Rows: &rr.rows}
		return &rr.Result, nil
	default:
		wr, err := src.Write(ctx, plan)
		if errors.Is(err, dialects.ErrSchemaChanged) {
			e.schemaChanged(ctx, p, plan, err)
			return nil, fault.Wrap(fault.Conflict, err, "the table changed in the database since the gateway read it (%s); its columns are read again now: check the request against the table and send it again", fault.As(err).Message)
		}
		if err != nil {
			return nil, g.word(err)
		}
		e.audit(ctx, p, plan, object, wr.RowsAffected, nil, start)
		res := &Result{Action: plan.Action, RowsAffected: wr.RowsAffected}
		if plan.Return {
			// The dialect returned the readable columns writeOptions chose.
			res.Columns, res.Returned = wr.Columns, wr.Returned
			if res.Returned == nil {
				res.Returned = [][]any{}
			}
		} else if plan.Action == query.Insert && wr.Returned != nil {
			// Return only what the caller may read.
			rd, err := e.authz.Decide(p.ProjectID, p.Roles, object, query.Read)
			if err == nil && rd.Allowed {
				res.Columns, res.Returned = project(wr.Columns, wr.Returned, rd.Columns)
			}
		}
		return res, nil
	}
}

// audit records one operation of Execute; see auditOp.
func (e *Engine) audit(ctx context.Context, p *auth.Principal, plan *query.Plan, object string, n int64, err error, start time.Time) {
	e.auditOp(ctx, p, plan.Action.String(), object, n, err, start)
}

// auditOp records one data operation — action on object, n rows, err its
// outcome — in the log, and as an entry for the audit table through
// cfg.Audit when the caller is known. In the log, the first operation of a
// request rides on the request's one line (observe.LogOperation, its time
// as op_ms); any other gets a line of its own ("audit"). The request id and
// face come from ctx (observe.Middleware), so the entry and the request's
// log lines share the id. Nothing here blocks. Every road to a database
// (Execute, custom API calls) audits through it.
func (e *Engine) auditOp(ctx context.Context, p *auth.Principal, action, object string, n int64, err error, start time.Time) {
	d := time.Since(start)
	outcome, msg := "ok", ""
	if err != nil {
		fe := fault.As(err)
		outcome, msg = fe.WireCode(), fe.Message
	}
	rid, face := observe.RequestID(ctx), observe.Face(ctx)
	e.logOp(ctx, p, action, object, n, err, d, outcome, msg, face, rid)
	op := observe.Operation{Action: action, Object: object, Type: typeOf(object), Outcome: outcome, Rows: n, Failed: msg, Start: start, Stop: start.Add(d)}
	if p != nil {
		op.Identity = p.Identity
	}
	observe.RecordOperation(ctx, op)
	if e.cfg.Audit == nil || p == nil {
		return
	}
	e.cfg.Audit.Record(store.AuditEntry{
		At: start.UTC(), ProjectID: p.ProjectID, IdentityID: p.IdentityID, Identity: p.Identity, Roles: p.Roles,
		Face: face, Object: object, Action: action, Rows: n, Outcome: outcome, Message: msg,
		RequestID: rid, Duration: d,
	})
}

// logOp logs an operation of auditOp: on its request's line when that
// takes it, else as an "audit" line.
func (e *Engine) logOp(ctx context.Context, p *auth.Principal, action, object string, n int64, err error, d time.Duration, outcome, msg, face, rid string) {
	if err == nil && !e.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("action", action), slog.String("object", object), slog.Int64("rows", n),
		slog.Float64("op_ms", float64(d.Microseconds())/1000), slog.String("outcome", outcome))
	if msg != "" {
		attrs = append(attrs, slog.String("message", msg))
		// The cause (the database's own words: a duplicate key's constraint
		// and value, …) is for the operator only: callers and the audit
		// table get msg.
		if cause := fault.As(err).Err; cause != nil {
			attrs = append(attrs, slog.String("cause", cause.Error()))
		}
	}
	if p != nil {
		attrs = append(attrs, slog.String("identity", p.Identity), slog.Any("roles", p.Roles), slog.String("project", p.Project))
	}
	if observe.LogOperation(ctx, attrs...) {
		return
	}
	if face != "" {
		attrs = append(attrs, slog.String("face", face))
	}
	if rid != "" {
		attrs = append(attrs, slog.String("request_id", rid))
	}
	e.log.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}

// typeOf is the database type of an object "type/schema/table".
func typeOf(object string) string {
	t, _, _ := strings.Cut(object, "/")
	return t
}

// refused tells cfg.Refused of a refusal by a gate. tr is the explanation
// being built by Explain, which is not an operation and is not counted.
func (e *Engine) refused(ctx context.Context, tr *Explanation, gate RefusalGate) {
	if e.cfg.Refused != nil && tr == nil {
		e.cfg.Refused(ctx, gate)
	}
}

// TableInfo describes a table for listings.
type TableInfo struct {
	Type, Schema, Name string
	Columns            []dialects.Column
}

// Tables lists the tables of a project's database the principal may see,
// each with the columns its first allowed action (read first) grants.
func (e *Engine) Tables(ctx context.Context, p *auth.Principal, typ, schema string) ([]TableInfo, error) {
	s := e.cat.get(p.ProjectID, typ, schema)
	if s == nil {
		return nil, fault.New(fault.NotFound, "database %s/%s not found", typ, schema)
	}
	ts, err := s.allTables(ctx, e.cfg.RefreshInterval, e.cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	out := make([]TableInfo, 0, len(ts))
	for _, t := range ts {
		object := permissions.Object(typ, schema, t.Name)
		var cols []dialects.Column
		visible := false
		for _, act := range []query.Action{query.Read, query.Insert, query.Update, query.Delete} {
			d, err := e.authz.Decide(p.ProjectID, p.Roles, object, act)
			if err != nil {
				return nil, err
			}
			if d.Hidden {
				break
			}
			if d.Allowed {
				visible, cols = true, restrict(t, d.Columns).Columns
				break
			}
		}
		if !visible {
			continue // hidden tables are absent from listings
		}
		out = append(out, TableInfo{Type: typ, Schema: schema, Name: t.Name, Columns: cols})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Databases lists the (type, schema) pairs registered in the principal's project.
func (e *Engine) Databases(p *auth.Principal) [][2]string {
	var out [][2]string
	for _, s := range e.cat.list(p.ProjectID) {
		out = append(out, [2]string{s.db.Type, s.db.Schema})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

// readResult is a read's Result with its rows.
type readResult struct {
	Result
	rows auditRows
}

// prefetch reads the first row of rows into r so that errors the database
// reports only on the first fetch (timeouts, bad casts) surface before
// anything is sent; on such an error rows are closed.
func (r *peekRows) prefetch(rows dialects.Rows) error {
	r.Rows = rows
	r.has = rows.Next()
	if !r.has {
		if err := rows.Err(); err != nil {
			_ = rows.Close()
			return err
		}
	}
	r.peeked = true
	return nil
}

type peekRows struct {
	dialects.Rows
	peeked, has bool
}

func (r *peekRows) Next() bool {
	if r.peeked {
		r.peeked = false
		return r.has
	}
	return r.Rows.Next()
}

// auditRows counts streamed rows and audits the read once on Close.
type auditRows struct {
	peekRows
	n      int64
	closed bool

	// done, when set, audits the rows (a custom API's read); else
	// Engine.audit of what the fields below name.
	done   func(int64, error)
	e      *Engine
	ctx    context.Context
	p      *auth.Principal
	plan   *query.Plan
	object string
	start  time.Time
}

func (r *auditRows) Next() bool {
	if r.peekRows.Next() {
		r.n++
		return true
	}
	return false
}

func (r *auditRows) Close() error {
	err := r.peekRows.Close()
	if !r.closed {
		r.closed = true
		e := r.Err()
		if e == nil {
			e = err
		}
		if r.done != nil {
			r.done(r.n, e)
		} else {
			r.e.audit(r.ctx, r.p, r.plan, r.object, r.n, e, r.start)
		}
	}
	return err
}

// CanAnywhere reports whether the principal's key_type and roles allow an
// action on at least one table of its project. Listings of tools use it;
// every call still goes through Execute.
func (e *Engine) CanAnywhere(p *auth.Principal, action query.Action) bool {
	return e.authz.AuthorizeAnywhere(p.Subject(), action)
}
