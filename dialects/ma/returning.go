package ma

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// deleteReturning runs a DELETE … RETURNING (query.Plan.Return; MariaDB
// 10.0 and later, not MySQL) and answers the deleted rows.
func (s *Source) deleteReturning(ctx context.Context, st dialects.Stmt, meta *tableMeta) (dialects.WriteResult, error) {
	info, err := s.serverInfo(ctx)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	if !info.mariaDB {
		return dialects.WriteResult{}, fault.New(fault.Unsupported, "return=rows on delete needs MariaDB (DELETE … RETURNING); this server is MySQL %s", info.version)
	}
	r, err := s.query(ctx, nil, st, meta)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	defer r.Close()
	res := dialects.WriteResult{Columns: r.Columns(), Returned: [][]any{}}
	for r.Next() {
		vals, err := r.Values()
		if err != nil {
			return dialects.WriteResult{}, err
		}
		res.Returned = append(res.Returned, append([]any(nil), vals...))
	}
	if err := r.Err(); err != nil {
		return dialects.WriteResult{}, err
	}
	res.RowsAffected = int64(len(res.Returned))
	return res, nil
}
