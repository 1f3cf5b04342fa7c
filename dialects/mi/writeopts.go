package mi

import (
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// checkWriteOptions refuses what a mini-app table cannot do: an upsert
// (its rows are keyed by the id the gateway assigns, which no caller
// writes, and a field carries no unique key to find a duplicate by) and
// a write that returns its rows.
func checkWriteOptions(p *query.Plan) error {
	if len(p.OnConflict) > 0 {
		return fault.New(fault.Unsupported, "upsert (on_conflict) is not supported on mi tables: rows are keyed by the id the gateway assigns, and no field is a unique key")
	}
	if p.Return {
		return fault.New(fault.Unsupported, "return=rows is not supported on mi tables")
	}
	return nil
}
