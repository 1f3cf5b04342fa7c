package ms

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// estimateSQL finds a table or view of a schema by name (both bound as
// arguments, compared in the catalog, never written into the text) and
// sums the rows SQL Server keeps for its heap or clustered index
// (sys.partitions, index_id 0 or 1: one figure per partition). The catalog
// views show an object to any user holding a permission on it, unlike
// sys.dm_db_partition_stats, which needs VIEW DATABASE STATE; an object
// the login may not see is no row, as a missing one.
const estimateSQL = `SELECT o.[type], (SELECT SUM(p.[rows]) FROM sys.partitions AS p WHERE p.[object_id] = o.[object_id] AND p.[index_id] IN (0, 1))
FROM sys.objects AS o JOIN sys.schemas AS sc ON sc.[schema_id] = o.[schema_id]
WHERE sc.[name] = @p1 AND o.[name] = @p2 AND o.[type] IN ('U', 'V')`

// Estimate answers count=planned and count=estimated from sys.partitions:
// the rows of the table's heap or clustered index, which SQL Server keeps
// as rows change, without reading a row. Its planner's per-filter
// estimate is only shown to a login with SHOWPLAN, so a read with a Where
// — a filter, or the caller's row scope, which the engine ANDs into it —
// is counted exactly instead: the table's row count would tell a scoped
// caller how many rows lie outside its scope. A view (no partitions of its
// own) is counted exactly with
// the read's filter instead, the only figure it has. A table that is not
// there, or that the login may not see, is NotFound.
func (s *Source) Estimate(ctx context.Context, p *query.Plan) (int64, error) {
	p, err := s.plan(p)
	if err != nil {
		return 0, err
	}
	if p.Action != query.Read {
		return 0, fault.New(fault.Invalid, "Estimate needs a read plan, got %s", p.Action)
	}
	if s.closed.Load() {
		return 0, fault.New(fault.Unavailable, "database source is closed")
	}
	if p.Where != nil {
		return dialects.CountExact(ctx, s, p)
	}
	typ, rows, err := s.partitionRows(ctx, p.Schema, p.Table)
	if err != nil {
		return 0, err
	}
	if typ == "U" && rows.Valid {
		return rows.Int64, nil
	}
	return dialects.CountExact(ctx, s, p)
}

// partitionRows runs estimateSQL: the object's type ("U" a table, "V" a
// view) and, for a table, its rows.
func (s *Source) partitionRows(ctx context.Context, schema, table string) (string, sql.NullInt64, error) {
	qctx, cancel := s.bound(ctx)
	defer cancel()
	var (
		typ  string
		rows sql.NullInt64
	)
	err := s.db.QueryRowContext(qctx, estimateSQL, schema, table).Scan(&typ, &rows)
	if errors.Is(err, sql.ErrNoRows) {
		return "", rows, fault.New(fault.NotFound, "table %q not found", table)
	}
	if err != nil {
		return "", rows, s.err(qctx, err)
	}
	return strings.TrimSpace(typ), rows, nil
}

var _ dialects.Estimator = (*Source)(nil)
