package observe

import (
	"context"
	"math/rand/v2"
	"strings"

	"github.com/go-chi/chi/v5/middleware"
)

// Faces of the gateway, as they appear in the face label and in audit
// entries.
const (
	FaceREST = "rest"
	FaceMCP  = "mcp"
)

// RequestIDHeader carries the request id: read from a request when it is
// well formed, always set on the answer.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds an id taken from a request header.
const maxRequestIDLen = 128

type ctxKey int

const (
	faceKey ctxKey = iota
	traceKey
)

// RequestID returns the request id a Middleware put in ctx, or "".
func RequestID(ctx context.Context) string { return middleware.GetReqID(ctx) }

// WithRequestID returns ctx carrying id as its request id; tests and
// callers outside HTTP (stdio) use it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, middleware.RequestIDKey, id)
}

// Face returns the face (FaceREST, FaceMCP) a Middleware put in ctx, or "".
func Face(ctx context.Context) string {
	f, _ := ctx.Value(faceKey).(string)
	return f
}

// WithFace returns ctx carrying the face name.
func WithFace(ctx context.Context, face string) context.Context {
	return context.WithValue(ctx, faceKey, face)
}

// TraceID returns the W3C trace id of the caller's traceparent header, or "".
func TraceID(ctx context.Context) string {
	t, _ := ctx.Value(traceKey).(string)
	return t
}

// newRequestID returns 16 hex digits of randomness; unique enough to find a
// request in a day of logs, short enough to read out loud. They are the
// hex of the 8 bytes of a random uint64, its low byte first, written in
// the string's one allocation.
func newRequestID() string { return requestIDOf(rand.Uint64()) }

// requestIDOf writes v as newRequestID does.
func requestIDOf(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := range 8 {
		x := byte(v >> (8 * i))
		b[2*i], b[2*i+1] = digits[x>>4], digits[x&0xf]
	}
	return string(b[:])
}

// requestIDFrom keeps a caller's id when it is short and made of safe
// characters (it lands in logs and in the audit table); otherwise it makes
// a new one.
func requestIDFrom(h string) string {
	if h == "" || len(h) > maxRequestIDLen {
		return newRequestID()
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:/+=", c) >= 0
		if !ok {
			return newRequestID()
		}
	}
	return h
}

// traceIDFrom returns the trace id of a W3C traceparent header
// ("00-<32 hex>-<16 hex>-<2 hex>"), or "" when the header is absent or
// malformed. An all-zero trace id is invalid by the specification.
func traceIDFrom(h string) string {
	if h == "" {
		return "" // without Split's slice
	}
	parts := strings.Split(strings.TrimSpace(h), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 || parts[0] == "ff" {
		return ""
	}
	for _, p := range parts[:4] {
		if !isLowerHex(p) {
			return ""
		}
	}
	if strings.Trim(parts[1], "0") == "" {
		return ""
	}
	return parts[1]
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func contextWithTrace(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, traceKey, traceID)
}
