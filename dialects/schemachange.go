package dialects

import (
	"errors"

	"github.com/littlebitlabs/minimal/fault"
)

// ErrSchemaChanged marks a statement the database refused because a table
// or column it names no longer exists: the table changed after the engine
// read its shape. errors.Is finds it in the error SchemaChanged returns;
// the engine then refreshes the database's tables (and retries a read
// once).
var ErrSchemaChanged = errors.New("the table changed since its columns were read")

type schemaChanged struct{ err error }

func (e schemaChanged) Error() string   { return e.err.Error() }
func (e schemaChanged) Unwrap() []error { return []error{ErrSchemaChanged, e.err} }

// SchemaChanged is a dialect's error for an undefined table or column:
// of kind k with msg for the caller, err kept for the log, and marked
// ErrSchemaChanged.
func SchemaChanged(k fault.Kind, err error, msg string) *fault.Error {
	return fault.Wrap(k, schemaChanged{err}, "%s", msg)
}
