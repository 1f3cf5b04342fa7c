package ms

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// mapErr turns a driver error into a *fault.Error that wraps it, so the
// faces can pick a status by Kind and errors.As still finds the
// mssql.Error. closed tells whether the Source was closed, which makes every
// failure Unavailable. ctx is the context the statement ran under: once it
// is done, whatever the driver says is a timeout or a cancellation.
// Messages are caller-safe: server text is shown only for the data and
// constraint errors but a duplicate key, which is told in the same words on
// every dialect (dialects.DuplicateKey).
func mapErr(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}

	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(fault.Timeout, err, "database operation timed out")
	case errors.Is(err, context.Canceled):
		return fault.Wrap(fault.Timeout, err, "database operation canceled")
	}

	var se mssql.ServerError
	if errors.As(err, &se) {
		// A fatal server error: the process was ended and the connection
		// severed.
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	var me mssql.Error
	if errors.As(err, &me) {
		return mapServerError(me, err)
	}

	switch {
	case closed:
		return fault.Wrap(fault.Unavailable, err, "database source is closed")
	case ctx != nil && ctx.Err() != nil:
		// The driver reports a cancel it sent on the context's behalf in
		// its own words when the server did not confirm it.
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
	var re mssql.RetryableError
	var st mssql.StreamError
	switch {
	case errors.As(err, &ne), errors.As(err, &re), errors.As(err, &st):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// SQL Server error numbers the gateway tells apart. Numbers are stable
// across versions and languages; messages are not.
const (
	errDuplicateKey       = 2627 // unique or primary key constraint
	errDuplicateIndexKey  = 2601 // unique index
	errConstraint         = 547  // foreign key or check constraint
	errNotNull            = 515
	errConversion         = 245  // conversion failed, e.g. nvarchar → int
	errConvertType        = 8114 // error converting data type
	errConvertOverflow    = 248  // conversion of a string overflowed an int column
	errConvertOverflow1   = 244  // … a tinyint/smallint column
	errConvertDateTime    = 241  // conversion failed, string → date/time
	errDateTimeRange      = 242  // date/time out of range
	errConvertGUID        = 8169 // conversion failed, string → uniqueidentifier
	errOverflowConvert    = 8115 // arithmetic overflow converting an expression
	errOverflowType       = 220  // arithmetic overflow for data type
	errOverflowValue      = 232  // arithmetic overflow for type, value
	errTruncated          = 8152 // string or binary data would be truncated
	errTruncatedColumn    = 2628 // … in table, column, value (2019+)
	errDivideByZero       = 8134
	errImplicitConvert    = 257 // implicit conversion not allowed
	errOperandClash       = 206
	errIncompatibleOp     = 402  // data types incompatible in an operator
	errTextCompare        = 306  // text, ntext, image cannot be compared or sorted
	errTextOrder          = 420  // text, ntext, image in ORDER BY
	errXMLCompare         = 305  // xml cannot be compared or sorted
	errCollateType        = 447  // COLLATE on a non-character type (LIKE on a number)
	errFunctionArg        = 8116 // argument type invalid for a function (LOWER on ntext)
	errExplicitConvert    = 529  // explicit conversion not allowed
	errComputedColumn     = 271  // a value for a computed column
	errIdentityDefault    = 339  // DEFAULT or NULL as an explicit identity value
	errIdentityInsert     = 544  // a value for an identity column
	errIdentityUpdate     = 8102 // updating an identity column
	errRowversionUpdate   = 272
	errRowversionInsert   = 273
	errViewDerived        = 4406 // view or function with a derived field
	errViewMultiBase      = 4405 // view modification affecting several base tables
	errXMLParse           = 9400 // XML parsing: 9400–9499
	errXMLParseLast       = 9499
	errInvalidObject      = 208  // invalid object name: a table or view that is not there
	errTriggerOutput      = 334  // OUTPUT without INTO on a table with triggers
	errTooManyParams      = 8003 // more than 2100 parameters
	errTooManyRows        = 10738
	errDeadlock           = 1205
	errSnapshotConflict   = 3960
	errLockTimeout        = 1222
	errReadOnly           = 3906
	errLoginFailed        = 18456
	errCannotOpenDatabase = 4060
	errDatabaseNotOnline  = 942
	errOutOfMemory        = 701
	errFilegroupFull      = 1105
	errLogFull            = 9002
	errServerPaused       = 17142
)

// unavailable are errors that mean the server cannot serve now: logins
// refused, databases offline, resources exhausted, Azure SQL failovers and
// throttling.
var unavailable = map[int32]bool{
	errLoginFailed: true, errCannotOpenDatabase: true, 18452: true, 18470: true, 18486: true, 18487: true, 18488: true,
	errDatabaseNotOnline: true, 922: true, 923: true, 924: true, 926: true, 927: true, 945: true, 950: true,
	errOutOfMemory: true, errFilegroupFull: true, errLogFull: true, errServerPaused: true, 17809: true,
	233: true, 64: true, 121: true, 10053: true, 10054: true, 10060: true, 10061: true, 10928: true, 10929: true,
	40197: true, 40501: true, 40613: true, 40540: true, 40143: true, 49918: true, 49919: true, 49920: true,
	4221: true, // secondary replica not available for reads
}

// invalid are data and constraint errors a caller can fix by sending other
// values; their server message is shown.
var invalid = map[int32]bool{
	errConversion: true, errConvertType: true, errConvertDateTime: true,
	errConvertOverflow: true, errConvertOverflow1: true,
	errDateTimeRange: true, errConvertGUID: true, errOverflowConvert: true, errOverflowType: true,
	errOverflowValue: true, errTruncated: true, errTruncatedColumn: true, errDivideByZero: true,
	errComputedColumn: true, errIdentityDefault: true, errIdentityInsert: true, errIdentityUpdate: true, errRowversionUpdate: true,
	errRowversionInsert: true, errViewDerived: true, errViewMultiBase: true, 296: true, 295: true, 298: true,
	517: true, // adding a value to a date column caused an overflow
}

// typeMismatch are errors of an operator or function applied to a column
// type that has none, e.g. LIKE on an integer or ordering by ntext.
var typeMismatch = map[int32]bool{
	errImplicitConvert: true, errOperandClash: true, errIncompatibleOp: true, errTextCompare: true, errTextOrder: true, errXMLCompare: true,
	errCollateType: true, errFunctionArg: true, errExplicitConvert: true,
}

// mapServerError classifies an mssql.Error. The driver describes the last
// error of a request in the fields and keeps every one in All; the first
// one this package knows decides, so an error that follows another (a
// statement terminated after a constraint failed) does not hide it.
func mapServerError(me mssql.Error, err error) error {
	all := me.All
	if len(all) == 0 {
		all = []mssql.Error{me}
	}
	for _, e := range all {
		if k, ok := classify(e, err); ok {
			return k
		}
	}
	if me.Class >= 20 {
		// Severity 20 and above end the connection.
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}

func classify(e mssql.Error, err error) (error, bool) {
	n := e.Number
	switch {
	case n == errDuplicateKey, n == errDuplicateIndexKey:
		// The message names the constraint and the key's value, which may
		// be in columns the caller cannot see; it stays in the wrapped
		// error, for the log.
		return dialects.DuplicateKey(err), true
	case n == errNotNull:
		// "Cannot insert the value NULL into column 'x', table 'db.s.t'":
		// the column may be one the caller's template hides.
		return dialects.Violated(dialects.NotNullViolation, "", err), true
	case n == errConstraint:
		// The message names the constraint, the database and the other
		// table; 547 covers foreign keys and checks alike.
		return dialects.Violated(dialects.ConstraintViolation, "", err), true
	case invalid[n], n >= errXMLParse && n <= errXMLParseLast:
		return fault.Wrap(fault.Invalid, err, "%s", e.Message), true
	case typeMismatch[n]:
		return fault.Wrap(fault.Invalid, err, "operator not supported for this column type"), true
	case n == errInvalidObject:
		// The catalog the engine holds is older than a DROP TABLE.
		return fault.Wrap(fault.NotFound, err, "table not found"), true
	case n == errTriggerOutput:
		return fault.Wrap(fault.Unsupported, err, "inserting into a table with enabled triggers is not supported: SQL Server cannot return the inserted rows"), true
	case n == errTooManyParams, n == errTooManyRows:
		return fault.Wrap(fault.TooLarge, err, "statement too large for SQL Server"), true
	case n == errDeadlock, n == errSnapshotConflict:
		// The same call can succeed again.
		return fault.Wrap(fault.Conflict, err, "transaction conflicted with another; retry"), true
	case n == errLockTimeout:
		return fault.Wrap(fault.Timeout, err, "database lock wait timed out"), true
	case n == errReadOnly:
		return fault.Wrap(fault.Unavailable, err, "database is read-only"), true
	case unavailable[n]:
		return fault.Wrap(fault.Unavailable, err, "database unavailable"), true
	}
	return nil, false
}
