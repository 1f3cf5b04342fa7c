package ch

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/sqlgen"
	"github.com/littlebitlabs/minimal/fault"
)

// CheckValues decides each test with ClickHouse's own conversion (each value
// bound exactly as an insert binds it: cast to the column's type) and its
// comparisons; see dialects.ValueChecker. The answers are the UInt8 test
// indexes of one statement (the engine sends at most 200 tests at a time).
func (s *Source) CheckValues(ctx context.Context, t *dialects.Table, tests []dialects.ValueTest) ([]bool, error) {
	info, err := s.info(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	if len(tests) > 256 {
		return nil, fault.New(fault.Internal, "value check: %d tests in one statement, at most 256", len(tests))
	}
	b := newBuilder(info)
	b.ValueChecks(tests, func(col string, v any) {
		if b.column(col) == nil {
			b.Fail(fault.New(fault.Internal, "value check: no column %q in %s", col, t.Name))
			return
		}
		b.value(col, v, inWrite)
	})
	st, err := b.Stmt()
	if err != nil {
		return nil, err
	}
	qctx, stop, _ := s.bounded(ctx, s.statementLimit(), nil)
	defer stop()
	rs, err := s.conn.Query(qctx, st.SQL, st.Args...)
	if err != nil {
		return nil, s.failBounded(ctx, qctx, t.Name, err)
	}
	defer rs.Close()
	var got []int64
	for rs.Next() {
		var i uint8
		if err := rs.Scan(&i); err != nil {
			return nil, s.failBounded(ctx, qctx, t.Name, err)
		}
		got = append(got, int64(i))
	}
	if err := rs.Err(); err != nil {
		return nil, s.failBounded(ctx, qctx, t.Name, err)
	}
	return sqlgen.CheckedIndexes(len(tests), got)
}
