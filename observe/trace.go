package observe

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is optional and configured by the standard OpenTelemetry
// environment only: with OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, or OTEL_TRACES_EXPORTER=otlp,
// spans are exported over OTLP/HTTP (protobuf) in batches; the exporter,
// sampler and batch settings read the rest of the OTEL_* variables
// themselves. OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keep it
// off. Off, no span is made at all.
//
// Spans: one server span per request of either face (named "METHOD
// route", a caller's W3C traceparent continued), and under it one span per
// data operation (named "ACTION OBJECT", recorded where the operation is
// audited, so every road to a database has one).

// Instrumentation is the tracer's name.
const Instrumentation = "github.com/littlebitlabs/minimal"

var tracing atomic.Pointer[trace.Tracer]

// tracer returns the tracer, nil when tracing is off.
func tracer() trace.Tracer {
	if t := tracing.Load(); t != nil {
		return *t
	}
	return nil
}

// TracingError is a tracing configuration the gateway cannot serve.
type TracingError struct{ Msg string }

func (e *TracingError) Error() string { return "tracing: " + e.Msg }

// StartTracing switches tracing on when getenv asks for it (see above) and
// returns the function that flushes and stops it; on is false when tracing
// stays off. version is reported as service.version; service.name is
// "minimal" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say
// otherwise.
func StartTracing(ctx context.Context, getenv func(string) string, version string) (stop func(context.Context) error, on bool, err error) {
	if on, err = wantTracing(getenv); err != nil || !on {
		return func(context.Context) error { return nil }, false, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, false, &TracingError{Msg: "OTLP exporter: " + err.Error()}
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "minimal"), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, false, &TracingError{Msg: "resource: " + err.Error()}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := tp.Tracer(Instrumentation, trace.WithInstrumentationVersion(version))
	tracing.Store(&t)
	return func(ctx context.Context) error {
		tracing.Store(nil)
		return tp.Shutdown(ctx)
	}, true, nil
}

// wantTracing reads the switches of the OpenTelemetry environment.
func wantTracing(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			if v != "http/protobuf" {
				return false, &TracingError{Msg: fmt.Sprintf("%s=%s is not served: the gateway exports OTLP over HTTP, set http/protobuf", k, v)}
			}
			break
		}
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, &TracingError{Msg: fmt.Sprintf("OTEL_TRACES_EXPORTER=%s is not served: use otlp or none", exp)}
	}
}

// startServerSpan starts the span of a request, continuing the caller's
// traceparent; nil when tracing is off.
func startServerSpan(ctx context.Context, header propagation.HeaderCarrier, method, path, face, id string) (context.Context, trace.Span) {
	t := tracer()
	if t == nil {
		return ctx, nil
	}
	ctx = propagation.TraceContext{}.Extract(ctx, header)
	ctx, span := t.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", method), attribute.String("url.path", path),
		attribute.String("minimal.face", face), attribute.String("minimal.request_id", id)))
	return contextWithTrace(ctx, span.SpanContext().TraceID().String()), span
}

// endServerSpan names the span after the route and ends it.
func endServerSpan(span trace.Span, method, route string, status int) {
	if span == nil {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, fmt.Sprintf("HTTP %d", status))
	}
	span.End()
}

// Operation is a finished data operation to record as a span.
type Operation struct {
	// Action and Object name the span ("read pg/public/items").
	Action, Object string
	// Type is the database type (pg, ms, ma, ch, mi).
	Type, Identity, Outcome string
	Rows                    int64
	// Failed is the error message when the operation failed.
	Failed      string
	Start, Stop time.Time
}

// dbSystems are the OpenTelemetry db.system.name values of the types.
var dbSystems = map[string]string{"pg": "postgresql", "ms": "microsoft.sql_server", "ma": "mariadb", "ch": "clickhouse", "mi": "sqlite"}

// RecordOperation records op as a span under ctx's span; nothing when
// tracing is off.
func RecordOperation(ctx context.Context, op Operation) {
	t := tracer()
	if t == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("minimal.action", op.Action), attribute.String("minimal.object", op.Object),
		attribute.Int64("minimal.rows", op.Rows), attribute.String("minimal.outcome", op.Outcome),
	}
	if sys := dbSystems[op.Type]; sys != "" {
		attrs = append(attrs, attribute.String("db.system.name", sys))
	}
	if op.Identity != "" {
		attrs = append(attrs, attribute.String("minimal.identity", op.Identity))
	}
	_, span := t.Start(ctx, op.Action+" "+op.Object, trace.WithTimestamp(op.Start), trace.WithAttributes(attrs...))
	if op.Failed != "" {
		span.SetStatus(codes.Error, op.Failed)
	}
	span.End(trace.WithTimestamp(op.Stop))
}
