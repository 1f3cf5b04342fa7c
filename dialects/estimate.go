package dialects

import (
	"context"

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
