package pg

import (
	"context"
	"encoding/json"
	"math"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Estimate answers the planner's estimate of the rows a read selects: the
// "Plan Rows" of EXPLAIN (FORMAT JSON) of the read's own statement, from
// the table statistics ANALYZE and autovacuum keep (reltuples and the
// column histograms), the filter included. Nothing is read.
func (s *Source) Estimate(ctx context.Context, p *query.Plan) (int64, error) {
	p, err := s.plan(p)
	if err != nil {
		return 0, err
	}
	st, err := Dialect{}.Render(p)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	conn, err := s.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	var raw []byte
	if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+st.SQL, st.Args...).Scan(&raw); err != nil {
		return 0, s.err(ctx, err)
	}
	var out []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		return 0, fault.New(fault.Internal, "pg: unexpected EXPLAIN answer")
	}
	return int64(math.Round(out[0].Plan.Rows)), nil
}

var _ dialects.Estimator = (*Source)(nil)
