package pg

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// mapErr turns a driver error into a *fault.Error that wraps it, so the
// faces can pick a status by Kind and errors.As still finds the
// *pgconn.PgError. closed tells whether the Source was closed, which makes
// every failure Unavailable. Messages are caller-safe: server text is shown
// only for data exceptions (class 22); a duplicate key and the other
// integrity violations (class 23) are told in the same words on every
// dialect (dialects.DuplicateKey, dialects.Violated).
func mapErr(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}

	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) {
			// Refused while connecting: bad password, unknown database, too
			// many connections. The operator must act; callers learn only
			// that the database is unavailable.
			return fault.Wrap(fault.Unavailable, err, "database unavailable")
		}
		return mapPgError(pe, err)
	}

	switch {
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return fault.Wrap(fault.Timeout, err, "database operation timed out")
	case errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Timeout, err, "database operation canceled")
	case closed:
		return fault.Wrap(fault.Unavailable, err, "database source is closed")
	case ctx != nil && ctx.Err() != nil:
		return fault.Wrap(fault.Timeout, err, "database operation timed out")
	case isConnErr(err):
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}

// isConnErr reports failures of the connection itself, as opposed to errors
// in a statement.
func isConnErr(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case pgconn.SafeToRetry(err):
		// Nothing reached the server (for instance a connection that was
		// already closed): a transient failure of the link.
		return true
	}
	return false
}

func mapPgError(pe *pgconn.PgError, err error) error {
	code := pe.Code
	class := ""
	if len(code) >= 2 {
		class = code[:2]
	}
	switch {
	case code == "42P10":
		// invalid_column_reference: ON CONFLICT names no unique key.
		return dialects.NoUniqueKey(err, nil)
	case code == "23505", code == "23P01":
		// unique and exclusion violations: the detail names the constraint
		// and the key's value, which may be in columns the caller cannot
		// see; it stays in the wrapped error, for the log.
		return dialects.DuplicateKey(err)
	case code == "23502":
		// not_null_violation: the message names the column and the table,
		// which the caller's template may hide; column_name is structured.
		return dialects.Violated(dialects.NotNullViolation, pe.ColumnName, err)
	case code == "23503", code == "23001":
		// foreign_key_violation, restrict_violation: the message and detail
		// name the constraint and the other table.
		return dialects.Violated(dialects.ForeignKeyViolation, "", err)
	case code == "23514":
		// check_violation: the message names the constraint.
		return dialects.Violated(dialects.CheckViolation, "", err)
	case class == "23":
		return dialects.Violated(dialects.ConstraintViolation, "", err)
	case class == "22":
		// data exceptions (bad input syntax, out of range, division by
		// zero …): the message names the type and the value sent.
		return fault.Wrap(fault.Invalid, err, "%s", pe.Message)
	case code == "428C9":
		// generated_always: a value for a GENERATED ALWAYS column.
		return fault.Wrap(fault.Invalid, err, "%s", pe.Message)
	case code == "42883":
		// undefined_function: an operator applied to a column type that has
		// none, e.g. LIKE on an integer.
		return fault.Wrap(fault.Invalid, err, "operator not supported for this column type")
	case code == "42P01", code == "3F000":
		// undefined_table, invalid_schema_name: dropped after the engine's
		// catalog was read. The caller gets the 404 a missing table gets.
		return dialects.SchemaChanged(fault.NotFound, err, "table not found")
	case code == "42703":
		// undefined_column: dropped or renamed after the catalog was read.
		return dialects.SchemaChanged(fault.Invalid, err, "unknown column")
	case code == "57014":
		// query_canceled: statement_timeout or a cancel request.
		return fault.Wrap(fault.Timeout, err, "database statement timed out")
	case code == "57P01", code == "57P02", code == "57P03", class == "08", class == "53":
		// shutdown, crash, cannot connect now; connection exceptions;
		// insufficient resources (too many connections, disk full).
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	case code == "25006":
		return fault.Wrap(fault.Unavailable, err, "database is read-only")
	case class == "40":
		// serialization failure, deadlock: the same call can succeed again.
		return fault.Wrap(fault.Conflict, err, "transaction conflicted with another; retry")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}
