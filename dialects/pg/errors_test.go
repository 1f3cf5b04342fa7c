package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func TestMapErr(t *testing.T) {
	pgErr := func(code string) error {
		return fmt.Errorf("query: %w", &pgconn.PgError{Code: code, Message: "msg " + code, ConstraintName: "c"})
	}
	tests := []struct {
		name   string
		err    error
		closed bool
		kind   fault.Kind
		msg    string
	}{
		{"unique", pgErr("23505"), false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"exclusion", pgErr("23P01"), false, fault.Conflict, dialects.DuplicateKeyMessage},
		{"foreign key", pgErr("23503"), false, fault.Invalid, "the change would break a reference between rows (a foreign key)"},
		{"not null", pgErr("23502"), false, fault.Invalid, "a column that requires a value got none"},
		{"check", pgErr("23514"), false, fault.Invalid, "a check constraint of the table refused the row"},
		{"bad input", pgErr("22P02"), false, fault.Invalid, "msg 22P02"},
		{"out of range", pgErr("22003"), false, fault.Invalid, "msg 22003"},
		{"generated", pgErr("428C9"), false, fault.Invalid, ""},
		{"statement timeout", pgErr("57014"), false, fault.Timeout, ""},
		{"admin shutdown", pgErr("57P01"), false, fault.Unavailable, ""},
		{"cannot connect now", pgErr("57P03"), false, fault.Unavailable, ""},
		{"connection exception", pgErr("08006"), false, fault.Unavailable, ""},
		{"too many connections", pgErr("53300"), false, fault.Unavailable, ""},
		{"serialization", pgErr("40001"), false, fault.Conflict, ""},
		{"syntax", pgErr("42601"), false, fault.Internal, "database error"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false, fault.Timeout, ""},
		{"canceled", context.Canceled, false, fault.Timeout, ""},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, fault.Unavailable, ""},
		{"closed pool", errors.New("closed pool"), true, fault.Unavailable, ""},
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
}
