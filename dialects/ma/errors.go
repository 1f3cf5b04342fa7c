package ma

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// Server error numbers this package classifies. MariaDB and MySQL share
// most; where they differ both are listed.
const (
	erDupKey                      = 1022
	erConnCountError              = 1040 // too many connections
	erAccessDenied                = 1045
	erBadDB                       = 1049
	erBadNull                     = 1048
	erServerShutdown              = 1053
	erDupEntry                    = 1062
	erNoSuchTable                 = 1146
	erBadField                    = 1054
	erLockWaitTimeout             = 1205
	erLockDeadlock                = 1213
	erNoReferencedRow             = 1216
	erRowIsReferenced             = 1217
	erWarnNullToNotNull           = 1263
	erWarnDataOutOfRange          = 1264
	erWarnDataTruncated           = 1265
	erTruncatedWrongValue         = 1292
	erOptionPreventsStmt          = 1290 // --read-only
	erNoDefaultForField           = 1364
	erTruncatedWrongValueForField = 1366
	erIllegalValueForType         = 1367
	erDataTooLong                 = 1406
	erWrongValueForFunc           = 1411
	erQueryInterrupted            = 1317
	erRowIsReferenced2            = 1451
	erNoReferencedRow2            = 1452
	erDupEntryWithKeyName         = 1586
	erDataOutOfRange              = 1690
	erReadOnlyTx                  = 1792
	erGeneratedValue              = 1906 // MariaDB: value given for a generated column
	erConnectionKilled            = 1927 // MariaDB
	erStatementTimeout            = 1969 // MariaDB max_statement_time
	erQueryTimeout                = 3024 // MySQL max_execution_time
	erGeneratedValueMySQL         = 3105
	erInvalidJSONText             = 3140 // MySQL
	erCheckViolation              = 3819 // MySQL
	erConstraintFailed            = 4025 // MariaDB CHECK
	erNetPacketTooLarge           = 1153 // max_allowed_packet

	// Client-side numbers of the C client, for errors relayed by proxies.
	crConnectionError = 2002
	crConnHostError   = 2003
	crServerGone      = 2006
	crServerLost      = 2013
)

// mapErr turns a driver error into a *fault.Error that wraps it, so the
// faces can pick a status by Kind and errors.As still finds the
// *mysql.MySQLError. closed tells whether the Source was closed, which
// makes every failure Unavailable. Messages are caller-safe: server text is
// shown only for data and constraint errors but a duplicate key, which is
// told in the same words on every dialect (dialects.DuplicateKey).
func mapErr(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return mapServerError(me, err)
	}
	switch {
	case errors.Is(err, mysql.ErrPktTooLarge):
		return fault.Wrap(fault.TooLarge, err, "a value or statement exceeds the server's max_allowed_packet")
	case errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(fault.Timeout, err, "database operation timed out")
	case errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Timeout, err, "database operation canceled")
	case closed || errors.Is(err, sql.ErrConnDone):
		return fault.Wrap(fault.Unavailable, err, "database source is closed")
	case ctx != nil && ctx.Err() != nil:
		// The driver reports a canceled statement as a broken connection.
		return fault.Wrap(fault.Timeout, err, "database operation timed out")
	case isConnErr(err):
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}

// isConnErr reports failures of the connection itself, as opposed to errors
// in a statement.
func isConnErr(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, mysql.ErrPktSync),
		errors.Is(err, mysql.ErrPktSyncMul), errors.Is(err, mysql.ErrMalformPkt), errors.Is(err, mysql.ErrBusyBuffer):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

func mapServerError(me *mysql.MySQLError, err error) error {
	switch me.Number {
	case erDupEntry, erDupKey, erDupEntryWithKeyName:
		// "Duplicate entry 'x' for key 'name'" names the key's value, which
		// may be in columns the caller cannot see, and the key; it stays in
		// the wrapped error, for the log.
		return dialects.DuplicateKey(err)
	case erBadNull, erWarnNullToNotNull, erNoDefaultForField:
		// "Column 'x' cannot be null", "Field 'x' doesn't have a default
		// value": the column may be one the caller's template hides.
		return dialects.Violated(dialects.NotNullViolation, "", err)
	case erNoReferencedRow, erRowIsReferenced, erNoReferencedRow2, erRowIsReferenced2:
		// The message spells out the constraint, its columns and the
		// referenced table.
		return dialects.Violated(dialects.ForeignKeyViolation, "", err)
	case erCheckViolation, erConstraintFailed:
		// The message names the constraint (and, on MariaDB, the table).
		return dialects.Violated(dialects.CheckViolation, "", err)
	case erWarnDataOutOfRange, erWarnDataTruncated, erTruncatedWrongValue, erTruncatedWrongValueForField,
		erIllegalValueForType, erDataTooLong, erWrongValueForFunc, erDataOutOfRange,
		erGeneratedValue, erGeneratedValueMySQL, erInvalidJSONText:
		// Data errors: the server's message names the value and the
		// column it was sent for.
		return fault.Wrap(fault.Invalid, err, "%s", me.Message)
	case erNetPacketTooLarge:
		return fault.Wrap(fault.TooLarge, err, "a value or statement exceeds the server's max_allowed_packet")
	case erStatementTimeout, erQueryTimeout, erQueryInterrupted:
		return fault.Wrap(fault.Timeout, err, "database statement timed out")
	case erLockWaitTimeout:
		return fault.Wrap(fault.Timeout, err, "database lock wait timed out")
	case erLockDeadlock:
		// The same call can succeed again.
		return fault.Wrap(fault.Conflict, err, "transaction conflicted with another; retry")
	case erNoSuchTable:
		return dialects.SchemaChanged(fault.NotFound, err, "table not found")
	case erBadField:
		// Unknown column: dropped or renamed after the catalog was read.
		return dialects.SchemaChanged(fault.Invalid, err, "unknown column")
	case erOptionPreventsStmt, erReadOnlyTx:
		return fault.Wrap(fault.Unavailable, err, "database is read-only")
	case erConnCountError, erAccessDenied, erBadDB, erServerShutdown, erConnectionKilled,
		crConnectionError, crConnHostError, crServerGone, crServerLost:
		// Refused at connect or dropped: the operator must act; callers
		// learn only that the database is unavailable.
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}
