package engine

import (
	"context"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// The engine's entry points to the read-only file capabilities of a
// source (dialects.Definitions, dialects.TableAggregates): a table's
// definition as stored, and an aggregate over several tables in one
// statement. Like those of files.go they apply the gates, find the
// capability by a type assertion and audit.

// Definition answers a table's definition as its source stores it (for
// mi, the schema.yaml read from disk on this call), after the read gates
// (key_type AND locks, then the templates; a column list is the caller's
// face's to apply: it shows only the fields the caller may see). A table
// the caller may not see at all is NotFound, as everywhere. Audited as a
// read, refusals included.
func (e *Engine) Definition(ctx context.Context, p *auth.Principal, ref TableRef) (def []byte, err error) {
	if p != nil && !e.visible(p, ref.object()) {
		e.auditOp(ctx, p, auditRead, ref.object(), 0, errNoTable, time.Now())
		return nil, errNoTable
	}
	err = e.tableCall(ctx, p, ref, OpDefinition, true, func(src dialects.Source) (int64, error) {
		c, err := capability[dialects.Definitions](src, "stored definitions")
		if err != nil {
			return 0, err
		}
		def, err = c.Definition(ctx, ref.Table)
		return 0, err
	})
	return def, err
}

// Defined answers a table's definition as Definition does, for a face
// that checks a call's arguments against it before the call itself runs
// through the pipeline (the mini-app tools resolve their table so): the
// caller needs some right on the table, any of the four, as for seeing it
// in Tables; a table it may not see is NotFound. Like Tables it is a look
// at the catalog's own data and is not audited: the call it prepares is.
func (e *Engine) Defined(ctx context.Context, p *auth.Principal, ref TableRef) ([]byte, error) {
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	if !e.visible(p, ref.object()) {
		return nil, errNoTable
	}
	s := e.cat.get(p.ProjectID, ref.Type, ref.Schema)
	if s == nil {
		return nil, fault.New(fault.NotFound, "database %s/%s not found", ref.Type, ref.Schema)
	}
	src, err := s.open(ctx, e.cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	c, err := capability[dialects.Definitions](src, "stored definitions")
	if err != nil {
		return nil, err
	}
	return c.Definition(ctx, ref.Table)
}

// visible reports whether the caller holds some action on object, the
// rule of Tables: a table it holds none on is hidden.
func (e *Engine) visible(p *auth.Principal, object string) bool {
	for _, act := range []query.Action{query.Read, query.Insert, query.Update, query.Delete} {
		d, err := e.authz.Decide(p.ProjectID, p.Roles, object, act)
		if err != nil || d.Hidden {
			return false
		}
		if d.Allowed {
			return true
		}
	}
	return false
}

// AggregateTables takes one aggregate over the rows of several tables,
// chained in order, in one statement of the first table's source
// (dialects.TableAggregates: mini-app-mcp's query_aggregate over the
// drop-in mode's scopes). Every table needs the read right on every row
// and column: the statement reads the stored rows whole, so a row scope or
// a column list on any of them is refused, as for a snapshot. One
// operation is audited per call, on the tables' objects joined by ",",
// with the number of rows answered; a refusal is audited too.
func (e *Engine) AggregateTables(ctx context.Context, p *auth.Principal, refs []TableRef, a dialects.TableAggregate) (rows [][]any, err error) {
	start := time.Now()
	if p == nil {
		return nil, fault.New(fault.Unauthenticated, "missing access token")
	}
	objects := make([]string, len(refs))
	for i, r := range refs {
		objects[i] = r.object()
	}
	object := strings.Join(objects, ",")
	defer func() { e.auditOp(ctx, p, auditRead, object, int64(len(rows)), err, start) }()
	if len(refs) == 0 {
		return nil, fault.New(fault.Invalid, "an aggregate needs at least one table")
	}
	tables := make([]dialects.SourceTable, len(refs))
	for i, r := range refs {
		src, err := e.fileOpen(ctx, p, r.Type, r.Schema, r.object(), true, []string{store.ActionRead})
		if err != nil {
			return nil, err
		}
		tables[i] = dialects.SourceTable{Source: src, Table: r.Table}
	}
	c, err := capability[dialects.TableAggregates](tables[0].Source, "aggregates over several tables")
	if err != nil {
		return nil, err
	}
	return c.AggregateTables(ctx, tables, a)
}
