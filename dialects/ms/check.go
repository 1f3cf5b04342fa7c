package ms

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
)

// CheckValues decides each test with SQL Server's own conversion (a CAST to
// the column's declared type, precision and scale included) and its
// comparisons; see dialects.ValueChecker. A column of an alias type cannot
// be a CAST target: the check fails, and the scoped write with it.
func (s *Source) CheckValues(ctx context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	st, err := renderChecks(t, tests)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, fault.New(fault.Unavailable, "database source is closed")
	}
	qctx, cancel := s.bound(ctx)
	defer cancel()
	held, err := sqlgen.QueryChecks(qctx, s.db, st, len(tests))
	if err != nil {
		return nil, s.err(qctx, err)
	}
	return held, nil
}

// renderChecks renders the statement of CheckValues.
func renderChecks(t *dialects.Table, tests []dialects.ValueTest) (dialects.Stmt, error) {
	return sqlgen.CastChecks(&syntax, t, tests)
}
