package observe

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultBodyTimeout is the time a request body gets to arrive when a face
// is configured with none.
const DefaultBodyTimeout = 30 * time.Second

// BodyTimeoutError is the error a handler gets when it reads a request
// body that did not arrive within the body timeout; the faces answer it
// with 408 (fault.RequestTimeout).
type BodyTimeoutError struct {
	// Timeout is the body timeout that passed.
	Timeout time.Duration
	// Err is the read's error (a deadline exceeded on the connection).
	Err error
}

// Error names the timeout.
func (e *BodyTimeoutError) Error() string {
	return "request body not received within " + e.Timeout.String() + ": " + e.Err.Error()
}

// Unwrap exposes the read's error.
func (e *BodyTimeoutError) Unwrap() error { return e.Err }

// BodyDeadline guards a face against slow request bodies, on the
// connection the request came on (http.ResponseController):
//
//   - a request with a body must send all of it within timeout of the
//     handler's start (that is, of the end of its headers); a read past it
//     fails with a *BodyTimeoutError. Once the body is read to
//     its end the deadline is lifted, so a long answer (a streamed read) is
//     not cut by it. A timeout of 0 or less means DefaultBodyTimeout.
//   - an answer sent before the body is read to its end (a refusal before
//     the body is read: no token, a bad one; a body past the deadline)
//     carries "Connection: close": the connection is closed right after
//     it. Without this, net/http would read up to 256 KiB of the unread
//     body, at whatever pace the client sends it, before sending the
//     answer, and again before closing.
//
// http.Server.ReadTimeout is not used for this: it also counts the time to
// read the headers, and past it a handler still working on a long answer
// has its request context canceled.
//
// Only HTTP/1 requests are guarded (the listeners serve no other).
func BodyDeadline(timeout time.Duration) func(http.Handler) http.Handler {
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ProtoMajor != 1 {
				next.ServeHTTP(w, r)
				return
			}
			// One allocation: the body keeps the header's value.
			b := &deadlineBody{ReadCloser: r.Body, w: w, deadline: time.Now().Add(timeout), timeout: timeout}
			if err := b.setReadDeadline(b.deadline); err != nil {
				// The connection has no deadlines (a test recorder).
				next.ServeHTTP(w, r)
				return
			}
			b.conn[0] = "close"
			w.Header()["Connection"] = b.conn[:] // Header.Set("Connection", "close")
			defer b.done()
			r.Body = b
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody is a request body read under BodyDeadline's deadline.
type deadlineBody struct {
	io.ReadCloser
	w        http.ResponseWriter
	deadline time.Time
	timeout  time.Duration
	eof      bool
	conn     [1]string // the Connection header's value slice
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		if !b.eof {
			b.eof = true
			b.lift()
		}
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		err = &BodyTimeoutError{Timeout: b.timeout, Err: err}
	}
	return n, err
}

// setReadDeadline sets the read deadline of the request's connection
// (http.ResponseController).
func (b *deadlineBody) setReadDeadline(t time.Time) error {
	return http.NewResponseController(b.w).SetReadDeadline(t)
}

// lift removes the deadline and the "Connection: close" of a body read to
// its end. The server starts watching the connection (a background read)
// as soon as the body ends: had the deadline passed before it was lifted,
// that read may have failed on it and canceled the connection's context,
// so the connection is then closed after the answer all the same.
func (b *deadlineBody) lift() {
	_ = b.setReadDeadline(time.Time{})
	if time.Now().Before(b.deadline) {
		b.w.Header().Del("Connection")
	}
}

// done runs when the handler returns. Of a body not read to its end
// nothing more is read: the connection is closed after the answer
// ("Connection: close" is set) and net/http would otherwise read what
// remains, up to the deadline, before closing it.
func (b *deadlineBody) done() {
	if !b.eof {
		_ = b.setReadDeadline(longAgo)
	}
}

// longAgo is a read deadline that has passed.
var longAgo = time.Unix(1, 0)
