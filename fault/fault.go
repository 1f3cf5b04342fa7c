package fault

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an error by what the caller can do about it.
type Kind uint8

// The kinds of error. Their order carries no meaning.
const (
	Internal Kind = iota
	Invalid
	Unauthenticated
	Forbidden
	NotFound
	Conflict
	TooLarge
	Unsupported
	Unavailable
	Timeout
	// RequestTimeout: the caller did not send its request in time (a
	// request body slower than the body timeout).
	RequestTimeout
)

var kindNames = [...]string{
	Internal:        "INTERNAL",
	Invalid:         "INVALID",
	Unauthenticated: "UNAUTHENTICATED",
	Forbidden:       "FORBIDDEN",
	NotFound:        "NOT_FOUND",
	Conflict:        "CONFLICT",
	TooLarge:        "TOO_LARGE",
	Unsupported:     "UNSUPPORTED",
	Unavailable:     "UNAVAILABLE",
	Timeout:         "TIMEOUT",
	RequestTimeout:  "REQUEST_TIMEOUT",
}

// String returns the wire code of the kind, e.g. "FORBIDDEN".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "INTERNAL"
}

// Error is the gateway's error. Code defaults to Kind.String(); Message is
// safe to show to the caller; Err keeps the cause for errors.As/Is.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Err     error
}

// Error renders the message followed by the cause, for logs, saying
// nothing twice: a wrapper whose message ends with what the cause's text
// begins with (the same message wrapped again, or a message that quotes
// its cause's) writes that part once, so "database unavailable" wrapped in
// "database unavailable" reads "database unavailable: …", not the
// prefix twice.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return join(e.Message, e.Err.Error())
}

// join writes msg, ": " and cause, with the longest ending of msg (from
// the start or after a ": ") that cause begins with written once.
func join(msg, cause string) string {
	for i := 0; ; {
		tail := msg[i:]
		if cause == tail || strings.HasPrefix(cause, tail+": ") {
			return msg[:i] + cause
		}
		j := strings.Index(tail, ": ")
		if j < 0 {
			break
		}
		i += j + 2
	}
	if msg == "" {
		return cause
	}
	return msg + ": " + cause
}

// Unwrap exposes the cause.
func (e *Error) Unwrap() error { return e.Err }

// WireCode is the code shown to callers.
func (e *Error) WireCode() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Kind.String()
}

// New builds an error of a kind with a formatted, caller-safe message.
func New(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an error of a kind around a cause. The cause's text is not shown
// to callers, only the message.
func Wrap(k Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf reports the Kind of the first *Error in err's chain, or Internal.
func KindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return Internal
}

// As returns the first *Error in err's chain, or wraps err as Internal.
func As(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return &Error{Kind: Internal, Message: "internal error", Err: err}
}
