package ma

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func TestMapErr(t *testing.T) {
	myErr := func(n uint16) error {
		return fmt.Errorf("exec: %w", &mysql.MySQLError{Number: n, Message: fmt.Sprintf("msg %d", n)})
	}
	tests := []struct {
		name   string
		err    error
		closed bool
		kind   fault.Kind
		msg    string
	}{
		{"duplicate", myErr(1062), false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"duplicate key", myErr(1586), false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"not null", myErr(1048), false, fault.Invalid, "a column that requires a value got none"},
		{"no default", myErr(1364), false, fault.Invalid, ""},
		{"foreign key child", myErr(1452), false, fault.Invalid, "the change would break a reference between rows (a foreign key)"},
		{"foreign key parent", myErr(1451), false, fault.Invalid, ""},
		{"out of range", myErr(1264), false, fault.Invalid, "msg 1264"},
		{"incorrect value", myErr(1366), false, fault.Invalid, ""},
		{"incorrect datetime", myErr(1292), false, fault.Invalid, ""},
		{"too long", myErr(1406), false, fault.Invalid, ""},
		{"check MySQL", myErr(3819), false, fault.Invalid, ""},
		{"check MariaDB", myErr(4025), false, fault.Invalid, ""},
		{"generated", myErr(1906), false, fault.Invalid, ""},
		{"max_statement_time", myErr(1969), false, fault.Timeout, "database statement timed out"},
		{"max_execution_time", myErr(3024), false, fault.Timeout, ""},
		{"lock wait", myErr(1205), false, fault.Timeout, ""},
		{"deadlock", myErr(1213), false, fault.Conflict, ""},
		{"no table", myErr(1146), false, fault.NotFound, ""},
		{"read only", myErr(1290), false, fault.Unavailable, ""},
		{"too many connections", myErr(1040), false, fault.Unavailable, ""},
		{"access denied", myErr(1045), false, fault.Unavailable, "database unavailable"},
		{"unknown database", myErr(1049), false, fault.Unavailable, ""},
		{"server gone", myErr(2006), false, fault.Unavailable, ""},
		{"packet too large", myErr(1153), false, fault.TooLarge, ""},
		{"syntax", myErr(1064), false, fault.Internal, "database error"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false, fault.Timeout, ""},
		{"canceled", context.Canceled, false, fault.Timeout, ""},
		{"bad conn", driver.ErrBadConn, false, fault.Unavailable, ""},
		{"invalid conn", mysql.ErrInvalidConn, false, fault.Unavailable, ""},
		{"packet too large client", mysql.ErrPktTooLarge, false, fault.TooLarge, ""},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, fault.Unavailable, ""},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false, fault.Unavailable, ""},
		{"closed source", errors.New("sql: database is closed"), true, fault.Unavailable, ""},
		{"other", errors.New("boom"), false, fault.Internal, "database error"},
		{"already a fault", fault.New(fault.NotFound, "nope"), false, fault.NotFound, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mapErr(context.Background(), tt.err, tt.closed)
			if got := fault.KindOf(err); got != tt.kind {
				t.Fatalf("kind %s, want %s", got, tt.kind)
			}
			if tt.msg != "" && fault.As(err).Message != tt.msg {
				t.Errorf("message %q, want %q", fault.As(err).Message, tt.msg)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("cause not kept")
			}
		})
	}
	if mapErr(context.Background(), nil, false) != nil {
		t.Fatal("nil error mapped")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := fault.KindOf(mapErr(ctx, mysql.ErrInvalidConn, false)); got != fault.Timeout {
		t.Errorf("a connection broken by a canceled context: %s, want TIMEOUT", got)
	}
}
