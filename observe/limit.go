package observe

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// CodeRateLimited is the error code of a 429 answer.
const CodeRateLimited = "RATE_LIMITED"

// idleForget is how long a full bucket is kept before it is forgotten;
// a forgotten bucket comes back full, which is the same thing.
const idleForget = 10 * time.Minute

// Limiter is a token bucket per key (the identity id): each identity may
// make Burst requests at once and Rate per second over time, across both
// faces. A nil *Limiter admits everything.
type Limiter struct {
	rate  float64
	burst float64
	m     *Metrics
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter returns a limiter of rate requests per second with bursts of
// burst (at least 1; ceil(rate) when burst is 0). A rate of 0 or less
// switches limiting off: it returns nil. Refusals are counted in m.
func NewLimiter(rate float64, burst int, m *Metrics) *Limiter {
	if rate <= 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return nil
	}
	b := float64(burst)
	if burst <= 0 {
		b = math.Max(1, math.Ceil(rate))
	}
	return &Limiter{rate: rate, burst: b, m: m, now: time.Now, buckets: map[string]*bucket{}}
}

// Allow takes a token from key's bucket. When there is none it reports
// false and how long until there will be one.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > idleForget {
		l.sweep(now)
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
	}
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

// sweep forgets buckets that have refilled; callers hold l.mu.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.at).Seconds()*l.rate+b.tokens >= l.burst && now.Sub(b.at) > idleForget {
			delete(l.buckets, k)
		}
	}
	l.swept = now
}

// Admit takes a token for key. When there is none it answers 429 with
// Retry-After (whole seconds, at least 1) and the gateway's error envelope,
// counts the refusal by the face in the request's context, and reports
// false: the caller must not write anything more.
func (l *Limiter) Admit(w http.ResponseWriter, r *http.Request, key string) bool {
	ok, wait := l.Allow(key)
	if ok {
		return true
	}
	if l.m != nil {
		l.m.limited.WithLabelValues(faceLabel(Face(r.Context()))).Inc()
	}
	secs := max(int64(math.Ceil(wait.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{
		"code":       CodeRateLimited,
		"message":    "rate limit of " + strconv.FormatFloat(l.rate, 'g', -1, 64) + " requests per second for this identity exceeded; retry after " + strconv.FormatInt(secs, 10) + " s",
		"request_id": RequestID(r.Context()),
	}})
	return false
}

// RateLimit is middleware that admits a request by the key identify
// returns (the verified identity of its token). A request identify gives
// no key for (no token, a bad one) passes: the face's own credential layer
// refuses it. A nil limiter returns next unchanged.
func RateLimit(l *Limiter, identify func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if key := identify(r); key != "" && !l.Admit(w, r, key) {
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
