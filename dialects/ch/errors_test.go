package ch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/littlebitlabs/minimal/fault"
)

func TestMapErr(t *testing.T) {
	ex := func(code int32, msg string) error {
		return fmt.Errorf("query: %w", &clickhouse.Exception{Code: code, Name: "DB::Exception", Message: msg})
	}
	tests := []struct {
		name   string
		err    error
		closed bool
		kind   fault.Kind
		msg    string
	}{
		{"timeout", ex(159, "Timeout exceeded: elapsed 1.0 seconds, maximum: 1"), false, fault.Timeout, ""},
		{"cancelled", ex(394, "Query was cancelled"), false, fault.Timeout, ""},
		{"unknown table", ex(60, "Table db.t doesn't exist."), false, fault.NotFound, "table not found"},
		{"unknown database", ex(81, "Database db doesn't exist"), false, fault.NotFound, ""},
		{"unknown column", ex(47, "Unknown identifier: x"), false, fault.Invalid, "unknown column"},
		{"syntax", ex(62, "Syntax error: failed at position 1"), false, fault.Invalid, ""},
		{"type mismatch", ex(53, "Type mismatch"), false, fault.Invalid, ""},
		{"illegal type", ex(43, "Illegal types of arguments"), false, fault.Invalid, ""},
		{"no supertype", ex(386, "There is no supertype"), false, fault.Invalid, ""},
		{"parse", ex(6, "Cannot parse string 'abc' as Float64: syntax error at begin of string. Note: there are toFloat64OrZero"),
			false, fault.Invalid, "Cannot parse string 'abc' as Float64: syntax error at begin of string"},
		{"parse in insert", ex(27, "Cannot parse input: expected ,: while converting source column x to destination column y"),
			false, fault.Invalid, "Cannot parse input: expected ,"},
		{"date", ex(38, "Cannot parse date"), false, fault.Invalid, ""},
		{"datetime", ex(41, "Cannot parse datetime"), false, fault.Invalid, ""},
		{"number", ex(72, "Cannot parse number"), false, fault.Invalid, ""},
		{"convert", ex(70, "Cannot convert"), false, fault.Invalid, ""},
		{"decimal scale", ex(69, "Decimal value is too small."), false, fault.Invalid, "Decimal value is too small"},
		{"key column", ex(420, "Cannot UPDATE key column `id`"), false, fault.Invalid, "Cannot UPDATE key column `id`"},
		{"engine", ex(48, "Mutations are not supported by storage Log"), false, fault.Unsupported, ""},
		{"readonly", ex(164, "Cannot execute query in readonly mode"), false, fault.Unavailable, ""},
		{"wrong password", ex(193, "Wrong password for user default"), false, fault.Unavailable, "database unavailable"},
		{"too many queries", ex(202, "Too many simultaneous queries"), false, fault.Unavailable, ""},
		{"memory", ex(241, "Memory limit exceeded"), false, fault.Internal, "database error"},
		{"empty message", ex(6, ""), false, fault.Invalid, "value rejected by ClickHouse"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false, fault.Timeout, ""},
		{"canceled", context.Canceled, false, fault.Timeout, ""},
		{"eof", fmt.Errorf("read: %w", io.EOF), false, fault.Unavailable, ""},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false, fault.Unavailable, ""},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), false, fault.Unavailable, ""},
		{"closed conn", clickhouse.ErrConnectionClosed, false, fault.Unavailable, ""},
		{"pool exhausted", clickhouse.ErrAcquireConnTimeout, false, fault.Unavailable, ""},
		{"closed source", errors.New("closed"), true, fault.Unavailable, ""},
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
			var ce *clickhouse.Exception
			if errors.As(tt.err, &ce) && !errors.As(err, &ce) {
				t.Errorf("errors.As to *clickhouse.Exception fails on the mapped error")
			}
		})
	}
	if mapErr(context.Background(), nil, false) != nil {
		t.Fatal("nil error mapped")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if k := fault.KindOf(mapErr(ctx, errors.New("read failed"), false)); k != fault.Timeout {
		t.Errorf("an error after the caller gave up: %s, want TIMEOUT", k)
	}
}
