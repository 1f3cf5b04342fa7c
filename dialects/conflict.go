package dialects

import (
	"fmt"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// DuplicateKeyMessage is what a caller is told of a write refused by a
// unique key, a primary key or an exclusion constraint, on every dialect.
const DuplicateKeyMessage = "a row with the same key already exists"

// DuplicateKey is the Conflict of a write refused by a unique key, a
// primary key or an exclusion constraint. Its message names neither the
// constraint nor the key's value: the key may cover columns the caller's
// template hides, and constraint names are the database's, not the
// caller's. The driver's error, with the database's own detail, stays
// wrapped for the log.
func DuplicateKey(err error) *fault.Error {
	return fault.Wrap(fault.Conflict, err, DuplicateKeyMessage)
}

// NoUniqueKey is the Invalid answer to an upsert whose on_conflict columns
// are not the columns of one unique key (primary key or unique
// constraint) of the table: the database could not find a duplicate by
// them. cols may be nil where the database does not say which were named.
// The driver's error, if any, stays wrapped for the log.
func NoUniqueKey(err error, cols []string) *fault.Error {
	named := "on_conflict"
	if len(cols) > 0 {
		named = fmt.Sprintf("on_conflict (%s)", strings.Join(cols, ", "))
	}
	msg := named + " must name the columns of a unique key of the table (its primary key or a unique constraint)"
	if err == nil {
		return fault.New(fault.Invalid, "%s", msg)
	}
	return fault.Wrap(fault.Invalid, err, "%s", msg)
}
