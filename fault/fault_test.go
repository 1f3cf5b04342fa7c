package fault

import (
	"errors"
	"testing"
)

// TestErrorSaysNothingTwice: a message wrapped in itself, or a wrapper
// that quotes its cause's message, renders each part once; distinct
// messages still chain with ": ".
func TestErrorSaysNothingTwice(t *testing.T) {
	driver := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	unavailable := Wrap(Unavailable, driver, "database unavailable")
	tests := []struct {
		err  error
		want string
	}{
		{Wrap(Unavailable, unavailable, "database unavailable"), "database unavailable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{Wrap(Unavailable, Wrap(Unavailable, unavailable, "database unavailable"), "database unavailable"), "database unavailable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{Wrap(Unavailable, unavailable, "connection test of pg/x failed to connect: %s", unavailable.Message),
			"connection test of pg/x failed to connect: database unavailable: dial tcp 127.0.0.1:1: connect: connection refused"},
		{Wrap(Invalid, New(Invalid, "invalid MySQL connection string"), "invalid MySQL connection string"), "invalid MySQL connection string"},
		{Wrap(Invalid, errors.New("invalid MySQL connection string: default addr"), "invalid MySQL connection string"), "invalid MySQL connection string: default addr"},
		{Wrap(Internal, driver, "store: read org"), "store: read org: dial tcp 127.0.0.1:1: connect: connection refused"},
		{Wrap(Internal, errors.New("x"), ""), "x"},
		{New(NotFound, "org %q not found", "demo"), `org "demo" not found`},
		// A message that merely contains its cause's words elsewhere is kept whole.
		{Wrap(Invalid, errors.New("bad"), "bad input"), "bad input: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q\nwant      %q", got, tt.want)
		}
	}
}
