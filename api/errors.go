package api

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/wire"
)

// writeError answers with the error envelope, the status and headers of the
// error's kind taken from wire's one table.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if fault.As(err).Kind == fault.Internal {
		slog.ErrorContext(r.Context(), "internal error", "err", err, "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path)
	}
	wire.WriteError(w, err, middleware.GetReqID(r.Context()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
