package wire

import (
	"encoding/json"
	"net/http"

	"github.com/littlebitlabs/minimal/fault"
)

// RetryAfterSeconds is the Retry-After header of a 503 answer: the database
// or the control plane cannot be reached now, try again in that many seconds.
const RetryAfterSeconds = "5"

// Answer is how an error of one kind is answered over HTTP.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
}

// answers is the one table from error kind to HTTP answer, used by every
// face (REST, the MCP listener's credential and transport layer). A timeout
// is 504 everywhere: the database or the gateway's deadline ran out while
// the request was being served; 408 is the caller being slow to send it.
var answers = [...]Answer{
	fault.Internal:        {Status: http.StatusInternalServerError},
	fault.Invalid:         {Status: http.StatusBadRequest},
	fault.Unauthenticated: {Status: http.StatusUnauthorized},
	fault.Forbidden:       {Status: http.StatusForbidden},
	fault.NotFound:        {Status: http.StatusNotFound},
	fault.Conflict:        {Status: http.StatusConflict},
	fault.TooLarge:        {Status: http.StatusRequestEntityTooLarge},
	fault.Unsupported:     {Status: http.StatusBadRequest},
	fault.Unavailable:     {Status: http.StatusServiceUnavailable, RetryAfter: RetryAfterSeconds},
	fault.Timeout:         {Status: http.StatusGatewayTimeout},
	fault.RequestTimeout:  {Status: http.StatusRequestTimeout},
}

// AnswerOf returns how an error of kind k is answered; a kind outside the
// table is answered as Internal.
func AnswerOf(k fault.Kind) Answer {
	if !known(k) {
		k = fault.Internal
	}
	return answers[k]
}

func known(k fault.Kind) bool { return int(k) < len(answers) && answers[k].Status != 0 }

// Status returns the HTTP status of an error of kind k.
func Status(k fault.Kind) int { return AnswerOf(k).Status }

// SetErrorHeaders sets the headers an error answer of kind k carries:
// Retry-After where the table has one, and the Bearer challenge on 401.
func SetErrorHeaders(h http.Header, k fault.Kind) {
	a := AnswerOf(k)
	if a.RetryAfter != "" {
		h.Set("Retry-After", a.RetryAfter)
	}
	if a.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="minimal"`)
	}
}

// WriteError answers err with the status and headers of its kind and the
// error envelope. The message of an Internal error is not shown: the
// caller gets "internal error" and logs the cause itself (fault.As(err)
// says which it is). requestID may be empty.
func WriteError(w http.ResponseWriter, err error, requestID string) {
	fe := fault.As(err)
	kind := fe.Kind
	if !known(kind) {
		kind = fault.Internal
	}
	msg := fe.Message
	if kind == fault.Internal {
		msg = "internal error"
	}
	SetErrorHeaders(w.Header(), kind)
	WriteEnvelope(w, Status(kind), fe.WireCode(), msg, requestID)
}

// ErrorBody is the error envelope of every HTTP face:
// {"error":{"code":"FORBIDDEN","message":"…","request_id":"…"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of the error envelope.
type ErrorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// WriteEnvelope writes an error envelope with a status and a code that is
// not (only) a fault kind, e.g. 405 METHOD_NOT_ALLOWED.
func WriteEnvelope(w http.ResponseWriter, status int, code, msg, requestID string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: ErrorDetail{Code: code, Message: msg, RequestID: requestID}})
}
