package wire

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

// kinds lists every fault.Kind: Kind.String answers "INTERNAL" past the
// last one.
func kinds() []fault.Kind {
	ks := []fault.Kind{fault.Internal}
	for k := fault.Kind(1); k.String() != "INTERNAL"; k++ {
		ks = append(ks, k)
	}
	return ks
}

// TestAnswerTable pins the one kind → status table and its headers: every
// kind has its own row (a kind added to fault without one fails here), a
// timeout is 504 and only an unreachable database or control plane (503)
// says when to retry.
func TestAnswerTable(t *testing.T) {
	want := map[fault.Kind]struct {
		status     int
		retryAfter string
		challenge  bool
	}{
		fault.Internal:        {500, "", false},
		fault.Invalid:         {400, "", false},
		fault.Unauthenticated: {401, "", true},
		fault.Forbidden:       {403, "", false},
		fault.NotFound:        {404, "", false},
		fault.Conflict:        {409, "", false},
		fault.TooLarge:        {413, "", false},
		fault.Unsupported:     {400, "", false},
		fault.Unavailable:     {503, RetryAfterSeconds, false},
		fault.Timeout:         {504, "", false},
		fault.RequestTimeout:  {408, "", false},
	}
	all := kinds()
	if len(all) != len(want) {
		t.Fatalf("fault has %d kinds, the test knows %d: give the new kind its row in wire's table and here", len(all), len(want))
	}
	for _, k := range all {
		w, ok := want[k]
		if !ok {
			t.Fatalf("kind %v has no expected answer", k)
		}
		if k != fault.Internal && !known(k) {
			t.Errorf("kind %v has no row in the table (falls back to 500)", k)
		}
		if got := Status(k); got != w.status {
			t.Errorf("Status(%v) = %d, want %d", k, got, w.status)
		}
		h := http.Header{}
		SetErrorHeaders(h, k)
		if got := h.Get("Retry-After"); got != w.retryAfter {
			t.Errorf("%v: Retry-After %q, want %q", k, got, w.retryAfter)
		}
		if got := h.Get("WWW-Authenticate") != ""; got != w.challenge {
			t.Errorf("%v: WWW-Authenticate sent %v, want %v", k, got, w.challenge)
		}
	}
	if got := Status(fault.Kind(200)); got != 500 {
		t.Errorf("a kind outside the table: %d, want 500", got)
	}
}

// TestWriteError checks the envelope bytes: the message of the error, its
// code, the request id when there is one; an internal error hides its
// message and cause.
func TestWriteError(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		reqID  string
		status int
		body   string
		header map[string]string
	}{
		{"timeout", fault.New(fault.Timeout, "database statement timed out"), "r1", 504,
			`{"error":{"code":"TIMEOUT","message":"database statement timed out","request_id":"r1"}}` + "\n", nil},
		{"unavailable", fault.Wrap(fault.Unavailable, errors.New("dial tcp: refused"), "store: control plane unreachable"), "", 503,
			`{"error":{"code":"UNAVAILABLE","message":"store: control plane unreachable"}}` + "\n", map[string]string{"Retry-After": "5"}},
		{"unauthenticated", fault.New(fault.Unauthenticated, "access token has been revoked"), "", 401,
			`{"error":{"code":"UNAUTHENTICATED","message":"access token has been revoked"}}` + "\n", map[string]string{"WWW-Authenticate": `Bearer realm="minimal"`}},
		{"own code", &fault.Error{Kind: fault.Conflict, Code: "VERSION_MISMATCH", Message: "stale <version>"}, "", 409,
			`{"error":{"code":"VERSION_MISMATCH","message":"stale \u003cversion\u003e"}}` + "\n", nil},
		{"internal", fault.Wrap(fault.Internal, errors.New("secret dsn"), "boom"), "r2", 500,
			`{"error":{"code":"INTERNAL","message":"internal error","request_id":"r2"}}` + "\n", nil},
		{"plain error", errors.New("secret dsn"), "", 500,
			`{"error":{"code":"INTERNAL","message":"internal error"}}` + "\n", nil},
		{"unknown kind", &fault.Error{Kind: 200, Message: "what"}, "", 500,
			`{"error":{"code":"INTERNAL","message":"internal error"}}` + "\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, c.err, c.reqID)
			if rec.Code != c.status || rec.Body.String() != c.body {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), c.status, c.body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			for k, v := range c.header {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if c.header == nil && (rec.Header().Get("Retry-After") != "" || rec.Header().Get("WWW-Authenticate") != "") {
				t.Errorf("unexpected headers %v", rec.Header())
			}
		})
	}
}
