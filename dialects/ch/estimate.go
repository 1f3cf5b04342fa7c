package ch

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// partsSQL sums the rows of a table's active data parts: what a MergeTree
// table holds, from the server's own bookkeeping, without reading a row.
const partsSQL = `SELECT sum(rows), count() FROM system.parts WHERE active AND database = ? AND table = ?`

// Estimate answers count=planned and count=estimated from system.parts:
// the rows of the table's active parts (database and table bound as
// arguments). ClickHouse keeps no statistics of a filter's selectivity,
// so a read with a Where — a filter, or the caller's row scope, which the
// engine ANDs into it — is counted exactly instead: the table's row count
// would tell a scoped caller how many rows lie outside its scope. A table
// without active parts (an
// empty MergeTree table, or an engine without parts: a view, Memory, Log)
// is counted exactly with the read's filter instead, which is as cheap as
// an empty table and the only figure a view has.
func (s *Source) Estimate(ctx context.Context, p *query.Plan) (int64, error) {
	p, err := s.plan(ctx, p)
	if err != nil {
		return 0, err
	}
	if p.Action != query.Read {
		return 0, fault.New(fault.Invalid, "Estimate needs a read plan, got %s", p.Action)
	}
	if _, err := s.info(ctx, p.Table); err != nil {
		return 0, err // NotFound for a table that is not there
	}
	if p.Where != nil {
		return dialects.CountExact(ctx, s, p)
	}
	rows, parts, err := s.parts(ctx, p.Table)
	if err != nil {
		return 0, err
	}
	if parts > 0 {
		return int64(rows), nil
	}
	return dialects.CountExact(ctx, s, p)
}

// parts reads a table's active parts from system.parts: their rows and
// their number.
func (s *Source) parts(ctx context.Context, table string) (rows, parts uint64, err error) {
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), nil)
	defer stop()
	r, err := s.conn.Query(qctx, partsSQL, s.schema, table)
	if err != nil {
		return 0, 0, s.failBounded(ctx, qctx, "", err)
	}
	defer r.Close()
	if r.Next() {
		if err := r.Scan(&rows, &parts); err != nil {
			return 0, 0, s.failBounded(ctx, qctx, "", err)
		}
	}
	if err := r.Err(); err != nil {
		return 0, 0, s.failBounded(ctx, qctx, "", err)
	}
	return rows, parts, nil
}

var _ dialects.Estimator = (*Source)(nil)
