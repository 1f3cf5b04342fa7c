package ch

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// ClickHouse exception codes this package tells apart (ErrorCodes.cpp).
const (
	codeNoSuchColumn      = 16
	codeCannotParseText   = 6
	codeAssertionFailed   = 27
	codeUnknownElemInEnum = 36
	codeCannotParseDate   = 38
	codeCannotParseTime   = 41
	codeIllegalColumn     = 44
	codeIllegalType       = 43
	codeUnknownIdentifier = 47
	codeNotImplemented    = 48
	codeTypeMismatch      = 53
	codeUnknownTable      = 60
	codeSyntaxError       = 62
	codeArgOutOfBound     = 69
	codeCannotConvert     = 70
	codeCannotParseNumber = 72
	codeUnknownDatabase   = 81
	codeTooLargeString    = 131
	codeTimeoutExceeded   = 159
	codeReadonly          = 164
	codeTooManyQueries    = 202
	codeSocketTimeout     = 209
	codeNetworkError      = 210
	codeUnknownUser       = 192
	codeWrongPassword     = 193
	codeRequiredPassword  = 194
	codeIPNotAllowed      = 195
	codeSupportDisabled   = 344
	codeNullInOrdinary    = 349
	codeCannotParseUUID   = 376
	codeNoCommonType      = 386
	codeQueryCancelled    = 394
	codeDecimalOverflow   = 407
	codeCannotUpdateCol   = 420
	codeAuthFailed        = 516
)

// mapErr turns a driver error into a *fault.Error that wraps it, so the
// faces can pick a status by Kind and errors.As still finds the
// *clickhouse.Exception. closed tells whether the Source was closed, which
// makes every failure Unavailable. ClickHouse has no unique constraints, so
// nothing maps to Conflict.
func mapErr(ctx context.Context, err error, closed bool) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return mapException(ex, err)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
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
	var ne net.Error
	switch {
	case errors.As(err, &ne):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, driver.ErrBadConn),
		errors.Is(err, clickhouse.ErrConnectionClosed), errors.Is(err, clickhouse.ErrAcquireConnTimeout):
		return true
	}
	return false
}

// mapException maps a server exception by its code. Messages of data
// errors (a value that does not parse or fit) are shown; they name the value
// and the column. Others are generic.
func mapException(ex *clickhouse.Exception, err error) error {
	switch ex.Code {
	case codeTimeoutExceeded, codeQueryCancelled:
		return fault.Wrap(fault.Timeout, err, "database statement timed out")
	case codeUnknownTable, codeUnknownDatabase:
		return dialects.SchemaChanged(fault.NotFound, err, "table not found")
	case codeNoSuchColumn, codeUnknownIdentifier:
		return dialects.SchemaChanged(fault.Invalid, err, "unknown column")
	case codeSyntaxError:
		return fault.Wrap(fault.Invalid, err, "statement rejected by ClickHouse as a syntax error")
	case codeTypeMismatch, codeIllegalType, codeNoCommonType, codeIllegalColumn:
		return fault.Wrap(fault.Invalid, err, "value or operator does not suit the column's type")
	case codeCannotUpdateCol:
		return fault.Wrap(fault.Invalid, err, "%s", serverMessage(ex))
	case codeCannotParseText, codeAssertionFailed, codeCannotParseDate, codeCannotParseTime,
		codeCannotParseNumber, codeCannotConvert, codeArgOutOfBound, codeUnknownElemInEnum,
		codeTooLargeString, codeNullInOrdinary, codeCannotParseUUID, codeDecimalOverflow:
		return fault.Wrap(fault.Invalid, err, "%s", serverMessage(ex))
	case codeNotImplemented, codeSupportDisabled:
		return fault.Wrap(fault.Unsupported, err, "operation not supported by this table's engine")
	case codeReadonly:
		return fault.Wrap(fault.Unavailable, err, "database is read-only")
	case codeTooManyQueries, codeSocketTimeout, codeNetworkError,
		codeUnknownUser, codeWrongPassword, codeRequiredPassword, codeIPNotAllowed, codeAuthFailed:
		// Overloaded, or refused at login: the operator must act; callers
		// learn only that the database is unavailable.
		return fault.Wrap(fault.Unavailable, err, "database unavailable")
	}
	return fault.Wrap(fault.Internal, err, "database error")
}

// serverMessage is the first sentence of an exception's message, without
// the stack of "while …" contexts and hints ClickHouse appends.
func serverMessage(ex *clickhouse.Exception) string {
	msg := strings.TrimSpace(ex.Message)
	for _, cut := range []string{": while ", ". Note: ", "\n"} {
		if i := strings.Index(msg, cut); i > 0 {
			msg = msg[:i]
		}
	}
	msg = strings.TrimPrefix(msg, "DB::Exception: ")
	msg = strings.TrimSuffix(msg, ".")
	if msg == "" {
		return "value rejected by ClickHouse"
	}
	return msg
}
