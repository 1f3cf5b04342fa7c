package dialects

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// Estimator is the optional ability of a Source, found by a type
// assertion, to estimate how many rows a read plan selects from the
// planner's statistics instead of counting them (count=planned and
// count=estimated of the REST face). p is a validated read plan, the row
// scope ANDed into its Where, without a page. A Source without it answers
// those counts exactly.
type Estimator interface {
	Estimate(ctx context.Context, p *query.Plan) (int64, error)
}

// CountExact counts the rows a read plan selects — its Where applied, its
// page, projection and order dropped — as a count aggregate read on src:
// the figure an Estimator answers where it has no estimate of its own.
func CountExact(ctx context.Context, src Source, p *query.Plan) (int64, error) {
	cp := *p
	cp.Columns, cp.Order, cp.Limit, cp.Offset = nil, nil, 0, 0
	cp.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}}
	r, err := src.Read(ctx, &cp)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return 0, err
		}
		return 0, fault.New(fault.Internal, "count answered no row")
	}
	vals, err := r.Values()
	if err != nil {
		return 0, err
	}
	n, err := CountCell(vals[0])
	if err != nil {
		return 0, err
	}
	return n, r.Close()
}

// CountCell reads the cell of a count as the dialects answer it: an
// integer of any width, a json.Number, or its decimal text.
func CountCell(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fault.New(fault.Internal, "count answered %T %v", v, v)
}
