package ms

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// msErr builds the error go-mssqldb returns for a request that failed with
// the given server errors, first to last: the last described in the
// fields, every one in All.
func msErr(errs ...mssql.Error) error {
	last := errs[len(errs)-1]
	last.All = errs
	return fmt.Errorf("query: %w", last)
}

func num(n int32, msg string) mssql.Error {
	return mssql.Error{Number: n, Class: 16, Message: msg}
}

func TestMapErr(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		closed bool
		kind   fault.Kind
		msg    string
	}{
		{"unique constraint", nil, msErr(num(2627, "Violation of UNIQUE KEY constraint 'uq'. Cannot insert duplicate key in object 'dbo.items'. The duplicate key value is (a).")),
			false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"unique index", nil, msErr(num(2601, "Cannot insert duplicate key row")), false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"foreign key or check", nil, msErr(num(547, "The INSERT statement conflicted with the FOREIGN KEY constraint")), false, fault.Invalid,
			"a constraint of the table refused the row (a foreign key or a check)"},
		{"not null", nil, msErr(num(515, "Cannot insert the value NULL into column 'name'")), false, fault.Invalid, "a column that requires a value got none"},
		{"conversion", nil, msErr(num(245, "Conversion failed when converting the nvarchar value 'abc' to data type int.")), false, fault.Invalid,
			"Conversion failed when converting the nvarchar value 'abc' to data type int."},
		{"converting data type", nil, msErr(num(8114, "Error converting data type nvarchar to bigint.")), false, fault.Invalid, ""},
		{"date from string", nil, msErr(num(241, "Conversion failed when converting date and/or time from character string.")), false, fault.Invalid, ""},
		{"date out of range", nil, msErr(num(242, "out-of-range value")), false, fault.Invalid, ""},
		{"overflow converting", nil, msErr(num(8115, "Arithmetic overflow error converting expression to data type int.")), false, fault.Invalid, ""},
		{"overflow for type", nil, msErr(num(220, "Arithmetic overflow error for data type tinyint")), false, fault.Invalid, ""},
		{"truncation", nil, msErr(num(2628, "String or binary data would be truncated")), false, fault.Invalid, ""},
		{"identity default", nil, msErr(num(339, "DEFAULT or NULL are not allowed as explicit identity values.")), false, fault.Invalid, ""},
		{"xml parse", nil, msErr(num(9436, "XML parsing: line 1")), false, fault.Invalid, ""},
		{"like on a number", nil, msErr(num(447, "Expression type int is invalid for COLLATE clause.")), false, fault.Invalid,
			"operator not supported for this column type"},
		{"xml compared", nil, msErr(num(305, "The XML data type cannot be compared or sorted")), false, fault.Invalid, ""},
		{"first known error decides", nil, msErr(num(50000, "raised"), num(547, "check failed"), num(3621, "The statement has been terminated.")),
			false, fault.Invalid, "a constraint of the table refused the row (a foreign key or a check)"},
		{"triggers and OUTPUT", nil, msErr(num(334, "The target table 'dbo.t' of the DML statement cannot have any enabled triggers")),
			false, fault.Unsupported, ""},
		{"too many parameters", nil, msErr(num(8003, "The incoming request has too many parameters.")), false, fault.TooLarge, ""},
		{"deadlock", nil, msErr(num(1205, "Transaction was deadlocked")), false, fault.Conflict, "transaction conflicted with another; retry"},
		{"lock timeout", nil, msErr(num(1222, "Lock request time out period exceeded.")), false, fault.Timeout, ""},
		{"read-only database", nil, msErr(num(3906, "Failed to update database because the database is read-only.")), false, fault.Unavailable,
			"database is read-only"},
		{"login failed", nil, msErr(num(18456, "login error: Login failed for user 'sa'.")), false, fault.Unavailable, "database unavailable"},
		{"cannot open database", nil, msErr(num(4060, "login error: Cannot open database")), false, fault.Unavailable, ""},
		{"azure failover", nil, msErr(num(40613, "Database is not currently available")), false, fault.Unavailable, ""},
		{"fatal severity", nil, msErr(mssql.Error{Number: 99999, Class: 21, Message: "fatal"}), false, fault.Unavailable, ""},
		{"missing table", nil, msErr(num(208, "Invalid object name 'x'.")), false, fault.NotFound, "table not found"},
		{"invalid column", nil, msErr(num(207, "Invalid column name 'x'.")), false, fault.Internal, "database error"},
		{"server error", nil, fmt.Errorf("x: %w", mssql.ServerError{}), false, fault.Unavailable, ""},
		{"deadline", nil, fmt.Errorf("x: %w", context.DeadlineExceeded), false, fault.Timeout, "database operation timed out"},
		{"canceled", nil, context.Canceled, false, fault.Timeout, "database operation canceled"},
		{"context done, driver's own words", canceled, errors.New("failed to send attention"), false, fault.Timeout, ""},
		{"dial refused", nil, fmt.Errorf("unable to open tcp connection with host '127.0.0.1:1': %w",
			&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), false, fault.Unavailable, "database unavailable"},
		{"eof", nil, fmt.Errorf("read: %w", io.EOF), false, fault.Unavailable, ""},
		{"stream", nil, mssql.StreamError{InnerError: errors.New("bad token")}, false, fault.Unavailable, ""},
		{"closed pool", nil, errors.New("sql: database is closed"), true, fault.Unavailable, "database source is closed"},
		{"other", nil, errors.New("boom"), false, fault.Internal, "database error"},
		{"already a fault", nil, fault.New(fault.NotFound, "nope"), false, fault.NotFound, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			err := mapErr(ctx, tt.err, tt.closed)
			if got := fault.KindOf(err); got != tt.kind {
				t.Fatalf("kind %s, want %s: %v", got, tt.kind, err)
			}
			if tt.msg != "" && fault.As(err).Message != tt.msg {
				t.Errorf("message %q, want %q", fault.As(err).Message, tt.msg)
			}
			// The driver's error stays reachable.
			var want mssql.Error
			if errors.As(tt.err, &want) {
				var got mssql.Error
				if !errors.As(err, &got) || got.Number != want.Number {
					t.Errorf("errors.As mssql.Error lost: %v", err)
				}
			} else if !errors.Is(err, tt.err) {
				t.Errorf("cause not kept")
			}
		})
	}
	if mapErr(context.Background(), nil, false) != nil {
		t.Fatal("nil must stay nil")
	}
}
