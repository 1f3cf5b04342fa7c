package engine

import (
	"context"
	"slices"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// The engine's entry points to the optional file capabilities of a source
// (dialects.History, Snapshots, SchemaChanges, AliasStore: the mi source's
// snapshots, row history, schema.yaml changes, schema_batch and alias
// store; the read-only Definitions and TableAggregates are in
// tablefiles.go). Each applies the permission gates for the rights its operation
// exercises (gates: key_type AND locks, then the templates; an operation
// that copies or rewrites the whole table also refuses a row scope or a
// column list), counts and audits a refusal as Execute does, finds the
// capability on the database's source by a type assertion (a database
// without it answers Unsupported), runs it and audits the outcome. These
// are the only calls that reach those capabilities.

// TableRef names a table of one of the principal's registered databases.
type TableRef struct{ Type, Schema, Table string }

func (r TableRef) object() string { return permissions.Object(r.Type, r.Schema, r.Table) }

// FileOp is an operation of a file capability on one table; it decides
// the rights the gates check.
type FileOp uint8

// The file operations.
const (
	// OpHistory reads a row's history: read.
	OpHistory FileOp = iota
	// OpSnapshot copies the table's file: read on every row and column.
	OpSnapshot
	// OpCreate defines a new table: the schema action and create.
	OpCreate
	// OpRedefine replaces a table's definition: schema and update.
	OpRedefine
	// OpDrop removes a table's definition: schema and delete.
	OpDrop
	// OpDefinition reads a table's definition as stored: read.
	OpDefinition
)

// fileRights are the rights of each operation, and whether no row scope or
// column list may narrow them.
var fileRights = map[FileOp]struct {
	need      []string
	unbounded bool
}{
	OpHistory:    {[]string{store.ActionRead}, false},
	OpSnapshot:   {[]string{store.ActionRead}, true},
	OpCreate:     {[]string{store.ActionSchema, store.ActionCreate}, false},
	OpRedefine:   {[]string{store.ActionSchema, store.ActionUpdate}, false},
	OpDrop:       {[]string{store.ActionSchema, store.ActionDelete}, false},
	OpDefinition: {[]string{store.ActionRead}, false},
}

// The audit log's actions of the file operations.
const (
	auditRead  = "read"
	auditWrite = "write"
)

// fileCall runs one gated, audited call of a source's capability on an
// object: fileOpen, then run on the database's live source. With audit
// false a successful call is not audited (a dry run: nothing ran); a
// refusal or failure always is.
func (e *Engine) fileCall(ctx context.Context, p *auth.Principal, typ, schema, object, action string, unbounded, audit bool, need []string, run func(dialects.Source) (int64, error)) (err error) {
	start := time.Now()
	if p == nil {
		return fault.New(fault.Unauthenticated, "missing access token")
	}
	var n int64
	defer func() {
		if audit || err != nil {
			e.auditOp(ctx, p, action, object, n, err, start)
		}
	}()
	src, err := e.fileOpen(ctx, p, typ, schema, object, unbounded, need)
	if err != nil {
		return err
	}
	n, err = run(src)
	return err
}

// fileOpen applies the gates for need (each a CRUD action or
// store.ActionSchema) on object, counting a refusal by its gate, and
// returns the database's live source. It audits nothing: its callers do.
func (e *Engine) fileOpen(ctx context.Context, p *auth.Principal, typ, schema, object string, unbounded bool, need []string) (dialects.Source, error) {
	for _, a := range need {
		gate, err := e.gates(p, object, a, unbounded)
		if err != nil {
			if gate != "" {
				e.refused(ctx, nil, gate)
				return nil, &ActionRefused{Action: a, Err: err}
			}
			return nil, err
		}
	}
	s := e.cat.get(p.ProjectID, typ, schema)
	if s == nil {
		return nil, fault.New(fault.NotFound, "database %s/%s not found", typ, schema)
	}
	return s.open(ctx, e.cfg.ConnectTimeout)
}

// ActionRefused is the refusal of one right a file operation needed
// (store.ActionSchema or a CRUD action), so that a face can say which; it
// unwraps to the pipeline's refusal (a *fault.Error of kind Forbidden,
// with the caller's roles or the lock), which is what the audit records.
type ActionRefused struct {
	Action string
	Err    error
}

func (r *ActionRefused) Error() string { return r.Err.Error() }

// Unwrap gives the pipeline's refusal.
func (r *ActionRefused) Unwrap() error { return r.Err }

// capability finds a source's optional ability C.
func capability[C any](src dialects.Source, what string) (C, error) {
	c, ok := src.(C)
	if !ok {
		return c, fault.New(fault.Unsupported, "this database type has no %s", what)
	}
	return c, nil
}

// tableCall is fileCall for one FileOp on a table.
func (e *Engine) tableCall(ctx context.Context, p *auth.Principal, ref TableRef, op FileOp, audit bool, run func(dialects.Source) (int64, error)) error {
	r := fileRights[op]
	action := auditWrite
	if op == OpHistory || op == OpSnapshot || op == OpDefinition {
		action = auditRead
	}
	return e.fileCall(ctx, p, ref.Type, ref.Schema, ref.object(), action, r.unbounded, audit, r.need, run)
}

// HistoryAt reads the version of a row recorded at or before at (Unix
// seconds) through the table's dialects.History, after the read gates.
func (e *Engine) HistoryAt(ctx context.Context, p *auth.Principal, ref TableRef, rowID string, at int64) (h dialects.HistoryEntry, err error) {
	err = e.tableCall(ctx, p, ref, OpHistory, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.History](src, "row history")
		if err != nil {
			return 0, err
		}
		h, err = c.HistoryAt(ctx, ref.Table, rowID, at)
		if err != nil {
			return 0, err
		}
		return 1, nil
	})
	return h, err
}

// Snapshot copies the table's storage to the file dst (which must not
// exist) through dialects.Snapshots. A snapshot holds every row and
// column, so a read right narrowed by a row scope or a column list is
// refused.
func (e *Engine) Snapshot(ctx context.Context, p *auth.Principal, ref TableRef, dst string) error {
	return e.tableCall(ctx, p, ref, OpSnapshot, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.Snapshots](src, "snapshots")
		if err != nil {
			return 0, err
		}
		return 0, c.Snapshot(ctx, ref.Table, dst)
	})
}

// CountRows counts every row of a table for the dry run of op, under op's
// gates. Nothing runs, so a count that passes is not audited.
func (e *Engine) CountRows(ctx context.Context, p *auth.Principal, ref TableRef, op FileOp) (n int64, err error) {
	err = e.tableCall(ctx, p, ref, op, false, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.Snapshots](src, "row counts")
		if err != nil {
			return 0, err
		}
		n, err = c.CountRows(ctx, ref.Table)
		return 0, err
	})
	return n, err
}

// CreateTable defines a new table (dialects.SchemaChanges) after the
// gates of OpCreate, and makes the catalog look at the database again.
func (e *Engine) CreateTable(ctx context.Context, p *auth.Principal, ref TableRef, def []byte) error {
	defer e.Refresh(p, ref.Type, ref.Schema)
	return e.tableCall(ctx, p, ref, OpCreate, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.SchemaChanges](src, "schema changes")
		if err != nil {
			return 0, err
		}
		return 0, c.CreateTable(ctx, ref.Table, def)
	})
}

// ReplaceSchema redefines a table after the gates of OpRedefine; the
// answer is where the backup of the old definition went.
func (e *Engine) ReplaceSchema(ctx context.Context, p *auth.Principal, ref TableRef, def []byte, o dialects.FileOptions) (backup string, err error) {
	defer e.Refresh(p, ref.Type, ref.Schema)
	err = e.tableCall(ctx, p, ref, OpRedefine, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.SchemaChanges](src, "schema changes")
		if err != nil {
			return 0, err
		}
		backup, err = c.ReplaceSchema(ctx, ref.Table, def, o)
		return 0, err
	})
	return backup, err
}

// DropSchema removes a table's definition (its rows stay) after the gates
// of OpDrop; the answer is where the backup went.
func (e *Engine) DropSchema(ctx context.Context, p *auth.Principal, ref TableRef, o dialects.FileOptions) (backup string, err error) {
	defer e.Refresh(p, ref.Type, ref.Schema)
	err = e.tableCall(ctx, p, ref, OpDrop, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.SchemaChanges](src, "schema changes")
		if err != nil {
			return 0, err
		}
		backup, err = c.DropSchema(ctx, ref.Table, o)
		return 0, err
	})
	return backup, err
}

// batchRights are the rights each kind of batch op exercises: a query op
// runs any SQL on the table (all four CRUD rights); replace deletes the
// matching rows, counts them and inserts its items; the schema ops change
// the definition and act on rows as their own tools do.
var batchRights = map[dialects.BatchOpKind][]string{
	dialects.BatchQuery:   {store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionUpdate, store.ActionDelete},
	dialects.BatchReplace: {store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionDelete},
	dialects.BatchCreate:  {store.ActionSchema, store.ActionCreate},
	dialects.BatchUpdate:  {store.ActionSchema, store.ActionUpdate},
	dialects.BatchDelete:  {store.ActionSchema, store.ActionDelete},
}

// BatchRights are the rights a batch of ops of these kinds needs on its
// table: the union of its ops' rights, in the order schema, create, read,
// update, delete. Unbounded is true when an op runs SQL (query, replace)
// that neither row scopes nor column lists nor history can bound: those
// rights are then needed unscoped and on every column.
func BatchRights(kinds []dialects.BatchOpKind) (need []string, unbounded bool) {
	for _, a := range []string{store.ActionSchema, store.ActionCreate, store.ActionRead, store.ActionUpdate, store.ActionDelete} {
		for _, k := range kinds {
			if slices.Contains(batchRights[k], a) {
				need = append(need, a)
				break
			}
		}
	}
	for _, k := range kinds {
		unbounded = unbounded || k == dialects.BatchQuery || k == dialects.BatchReplace
	}
	return need, unbounded
}

// BatchRun is a schema_batch on one table that the gates let through
// (StartBatch): the only way to its source's Batch. The caller checks the
// ops against the table, then Runs them, previews them (CountRows), or
// gives up (Abandon); the engine audits the outcome as one write.
type BatchRun struct {
	e     *Engine
	ctx   context.Context
	p     *auth.Principal
	ref   TableRef
	kinds []dialects.BatchOpKind
	src   dialects.Source
	start time.Time
	ended bool
}

// StartBatch applies the gates of BatchRights(kinds) on the table; a
// refusal (an *ActionRefused) or a database that is not there is audited
// at once.
func (e *Engine) StartBatch(ctx context.Context, p *auth.Principal, ref TableRef, kinds []dialects.BatchOpKind) (*BatchRun, error) {
	start := time.Now()
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	need, unbounded := BatchRights(kinds)
	src, err := e.fileOpen(ctx, p, ref.Type, ref.Schema, ref.object(), unbounded, need)
	if err != nil {
		e.auditOp(ctx, p, auditWrite, ref.object(), 0, err, start)
		return nil, err
	}
	return &BatchRun{e: e, ctx: ctx, p: p, ref: ref, kinds: kinds, src: src, start: start}, nil
}

// CountRows counts every row of the table, for a dry run's preview.
func (b *BatchRun) CountRows() (int64, error) {
	c, err := capability[dialects.Snapshots](b.src, "row counts")
	if err != nil {
		return 0, err
	}
	return c.CountRows(b.ctx, b.ref.Table)
}

// Run runs the ops (of the kinds StartBatch authorized, in any order) and
// audits them with the rows they touched; the catalog then looks at the
// database again.
func (b *BatchRun) Run(ops []dialects.BatchOp, o dialects.FileOptions) (res dialects.BatchResult, err error) {
	if b.ended {
		return res, fault.New(fault.Internal, "batch already ended")
	}
	b.ended = true
	defer func() {
		b.e.auditOp(b.ctx, b.p, auditWrite, b.ref.object(), res.Deleted+res.Inserted+res.Changed, err, b.start)
		b.e.Refresh(b.p, b.ref.Type, b.ref.Schema)
	}()
	for _, op := range ops {
		if !slices.Contains(b.kinds, op.Kind) {
			return res, fault.New(fault.Internal, "batch op of a kind the gates did not check")
		}
	}
	c, err := capability[dialects.SchemaChanges](b.src, "schema changes")
	if err != nil {
		return res, err
	}
	res, err = c.Batch(b.ctx, b.ref.Table, ops, o)
	if err != nil {
		res = dialects.BatchResult{} // nothing stays: no row was touched
	}
	return res, err
}

// Abandon ends a batch that does not run: err, its reason (an op that does
// not fit the table), is audited; nil (a dry run) is not. After Run it
// does nothing.
func (b *BatchRun) Abandon(err error) {
	if b.ended {
		return
	}
	b.ended = true
	if err != nil {
		b.e.auditOp(b.ctx, b.p, auditWrite, b.ref.object(), 0, err, b.start)
	}
}

// Aliases lists the aliases stored beside a database's tables
// (dialects.AliasStore). Aliases hold no rows: the caller needs the read
// right on some table of its project (key_type and templates), and every
// alias it runs reads through Execute. Audited as a read of the database.
func (e *Engine) Aliases(ctx context.Context, p *auth.Principal, typ, schema string) (out []dialects.Alias, err error) {
	err = e.aliasCall(ctx, p, typ, schema, TableRef{}, query.Read, func(c dialects.AliasStore) (int64, error) {
		out, err = c.Aliases(ctx)
		return int64(len(out)), err
	})
	return out, err
}

// Alias finds one stored alias of a database by name, as Aliases.
func (e *Engine) Alias(ctx context.Context, p *auth.Principal, typ, schema, name string) (a dialects.Alias, ok bool, err error) {
	err = e.aliasCall(ctx, p, typ, schema, TableRef{}, query.Read, func(c dialects.AliasStore) (int64, error) {
		a, ok, err = c.Alias(ctx, name)
		if ok {
			return 1, err
		}
		return 0, err
	})
	return a, ok, err
}

// PutAlias stores a new alias in a database's store; false when the name
// is taken. Storing an alias is a write on the table it reads (on): the
// caller needs the update right there, key_type and locks included; an
// alias naming no table (a pattern) needs update on some table.
func (e *Engine) PutAlias(ctx context.Context, p *auth.Principal, typ, schema string, on TableRef, a dialects.Alias) (ok bool, err error) {
	err = e.aliasCall(ctx, p, typ, schema, on, query.Update, func(c dialects.AliasStore) (int64, error) {
		ok, err = c.PutAlias(ctx, a)
		if ok {
			return 1, err
		}
		return 0, err
	})
	return ok, err
}

// DropAlias removes an alias from a database's store, under the rights of
// PutAlias; false when there was none.
func (e *Engine) DropAlias(ctx context.Context, p *auth.Principal, typ, schema string, on TableRef, name string) (ok bool, err error) {
	err = e.aliasCall(ctx, p, typ, schema, on, query.Update, func(c dialects.AliasStore) (int64, error) {
		ok, err = c.DropAlias(ctx, name)
		if ok {
			return 1, err
		}
		return 0, err
	})
	return ok, err
}

// aliasCall gates and audits a call of a database's alias store: with a
// table (on), the gates of act there, audited on that table; without, act
// must be allowed on some table of the project, audited on the database
// ("type/schema").
func (e *Engine) aliasCall(ctx context.Context, p *auth.Principal, typ, schema string, on TableRef, act query.Action, run func(dialects.AliasStore) (int64, error)) error {
	action := auditWrite
	if act == query.Read {
		action = auditRead
	}
	object, need := typ+"/"+schema, []string(nil)
	if on.Table != "" {
		object, need = on.object(), []string{act.String()}
	} else if p != nil && !e.CanAnywhere(p, act) {
		err := permissions.Refusal(p.Roles)
		e.refused(ctx, nil, GateTemplate)
		e.auditOp(ctx, p, action, object, 0, err, time.Now())
		return err
	}
	return e.fileCall(ctx, p, typ, schema, object, action, false, true, need, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.AliasStore](src, "alias store")
		if err != nil {
			return 0, err
		}
		return run(c)
	})
}
