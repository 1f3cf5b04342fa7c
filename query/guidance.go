package query

import "github.com/littlebitlabs/minimal/fault"

// postgrestNames maps the reading parameters of PostgREST to what to write
// here instead.
var postgrestNames = map[string]string{
	"limit":  "use ps/pg: ps is the page size (required), pg the 0-based page number (required)",
	"offset": "use ps/pg: pg is the 0-based page number, in pages of ps rows",
	"order":  "use oy: oy=col.as,col2.ds (as ascending, ds descending)",
	"select": "use fc: fc=col,col2 picks the columns",
}

// postgrestHint turns the error of a filter named like a PostgREST
// parameter (limit, offset, order, select) whose value is not
// operator.value into a 400 naming our equivalent. A valid filter on a
// column so named is untouched.
func postgrestHint(name string, err error) error {
	use, ok := postgrestNames[name]
	if !ok {
		return err
	}
	return fault.New(fault.Invalid, "parameter %q is PostgREST's, not this API's: %s", name, use)
}
