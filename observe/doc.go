// Package observe holds what operators watch and the guards in front of
// both faces: the Prometheus registry of the gateway (Metrics), the HTTP
// middleware that gives every request an id, a log line and its series
// (Middleware; Front for a chi router that is the outermost handler, where
// chi's route context and the principal (Attach) live in the request's one
// context value), a slog handler that adds the request id to every record
// logged with the request's context (LogHandler), the process's JSON log
// handler, which writes slog.JSONHandler's bytes without reflection
// (JSONHandler), the buffered log writer (LogWriter), the per-identity
// token-bucket rate limit (Limiter), the deadline on request bodies
// (BodyDeadline), and the listener whose connections a handler can cork
// so that an answer it holds whole leaves in one write (CorkListener,
// ConnContext, Cork).
//
// Request ids travel in the context under chi's middleware.RequestIDKey,
// so middleware.GetReqID and RequestID read the same value on both faces.
// A W3C traceparent header sent by the caller is read and its trace id
// logged. With tracing switched on by the OpenTelemetry environment
// (StartTracing, trace.go), every request is a server span continuing that
// trace and every data operation a span under it, exported over OTLP/HTTP.
//
// observe is a leaf: it imports the Prometheus client, chi and its middleware,
// OpenTelemetry and the standard library, never a package of the project,
// so that engine can read the request id and face from a context without a
// cycle.
package observe
