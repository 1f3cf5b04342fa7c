package observe

import (
	"context"
	"log/slog"
)

// LogHandler wraps h so that every record logged with a context carrying a
// request id (slog's *Context methods, LogAttrs) gets a request_id
// attribute, and a trace_id when the caller sent a traceparent. A record
// that already has a request_id keeps its own.
func LogHandler(h slog.Handler) slog.Handler { return &logHandler{h: h} }

type logHandler struct{ h slog.Handler }

func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	id, trace := RequestID(ctx), TraceID(ctx)
	if id == "" && trace == "" {
		return l.h.Handle(ctx, r)
	}
	hasID, hasTrace := false, false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "request_id":
			hasID = true
		case "trace_id":
			hasTrace = true
		}
		return true
	})
	if id != "" && !hasID {
		r.AddAttrs(slog.String("request_id", id))
	}
	if trace != "" && !hasTrace {
		r.AddAttrs(slog.String("trace_id", trace))
	}
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{h: l.h.WithAttrs(attrs)}
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{h: l.h.WithGroup(name)}
}

var _ slog.Handler = (*logHandler)(nil)
