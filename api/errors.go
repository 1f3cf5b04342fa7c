package api

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/fault"
)

// statusOf is the one table mapping error kinds to HTTP statuses.
var statusOf = map[fault.Kind]int{
	fault.Invalid:         http.StatusBadRequest,
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.Forbidden:       http.StatusForbidden,
	fault.NotFound:        http.StatusNotFound,
	fault.Conflict:        http.StatusConflict,
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.Unsupported:     http.StatusBadRequest,
	fault.Unavailable:     http.StatusServiceUnavailable,
	fault.Timeout:         http.StatusGatewayTimeout,
	fault.RequestTimeout:  http.StatusRequestTimeout,
	fault.Internal:        http.StatusInternalServerError,
}

// RetryAfterSeconds is sent with 503 answers.
const RetryAfterSeconds = "5"

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// writeError answers with the error envelope.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	fe := fault.As(err)
	status, ok := statusOf[fe.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := fe.Message
	if fe.Kind == fault.Internal {
		slog.Error("internal error", "err", err, "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path)
		msg = "internal error"
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", RetryAfterSeconds)
	}
	if fe.Kind == fault.Unauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="minimal"`)
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: fe.WireCode(), Message: msg, RequestID: middleware.GetReqID(r.Context())}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
