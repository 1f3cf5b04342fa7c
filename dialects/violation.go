package dialects

import "github.com/littlebitlabs/minimal/fault"

// ViolationKind names the integrity rule of a table that refused a write.
type ViolationKind int

// The integrity rules a database enforces on a write.
const (
	// NotNullViolation: a NOT NULL column without a default got no value.
	NotNullViolation ViolationKind = iota + 1
	// ForeignKeyViolation: the row references a missing row, or rows of
	// another table still reference it.
	ForeignKeyViolation
	// CheckViolation: a CHECK constraint refused the row.
	CheckViolation
	// ConstraintViolation: a foreign key or a check constraint, where the
	// database does not tell which (SQL Server's error 547).
	ConstraintViolation
)

// Violation is an integrity rule that refused a write, as the dialect
// understood it from the driver's structured error — never from its text.
// The database's own message names constraints, tables and columns the
// caller may not see (a NOT NULL column its template hides, the referenced
// table of a foreign key); it stays in Err for the log, and the caller is
// told only what Message says. Column is the column at fault when the
// driver says so structurally (PostgreSQL's column_name), else empty; the
// engine names it to a caller who may see it.
type Violation struct {
	Kind   ViolationKind
	Column string
	// Named, when not empty, is the dialect's own message naming Column,
	// told instead of ColumnMessage's wording to a caller who may see it.
	Named string
	Err   error
}

// Error is the database's own message, for the log only.
func (v *Violation) Error() string { return v.Err.Error() }

// Unwrap gives the driver's error, so errors.As still finds it.
func (v *Violation) Unwrap() error { return v.Err }

// Message is what any caller may be told of the violation: the rule, never
// a name of the database's.
func (v *Violation) Message() string {
	switch v.Kind {
	case NotNullViolation:
		return "a column that requires a value got none"
	case ForeignKeyViolation:
		return "the change would break a reference between rows (a foreign key)"
	case CheckViolation:
		return "a check constraint of the table refused the row"
	}
	return "a constraint of the table refused the row (a foreign key or a check)"
}

// ColumnMessage is the message naming column, for a caller who may see it.
func (v *Violation) ColumnMessage(column string) string {
	if v.Named != "" {
		return v.Named
	}
	if v.Kind == NotNullViolation {
		return "column \"" + column + "\" requires a value"
	}
	return v.Message() + " (column \"" + column + "\")"
}

// Violated is the Invalid fault of a write refused by an integrity rule:
// its message names nothing of the database's (Violation.Message); the
// driver's error stays wrapped for the log.
func Violated(kind ViolationKind, column string, err error) *fault.Error {
	v := &Violation{Kind: kind, Column: column, Err: err}
	return fault.Wrap(fault.Invalid, v, "%s", v.Message())
}
