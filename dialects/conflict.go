package dialects

import "github.com/littlebitlabs/minimal/fault"

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
