package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// CORS for browser applications: off unless Config.CORSOrigins lists the
// origins allowed to call the REST face. Tokens travel in headers
// (LB-Access-Token, Authorization), never in cookies, so no answer allows
// credentials; an allowed origin is echoed exactly, and a list of "*"
// alone allows every origin with a literal "*".

// AnyOrigin, alone in Config.CORSOrigins, allows every origin.
const AnyOrigin = "*"

// corsMaxAge is how long (seconds) a browser may reuse a preflight.
const corsMaxAge = "600"

// Request headers a browser may send, methods it may use, and answer
// headers its scripts may read.
const (
	corsAllowHeaders  = "LB-Access-Token, Authorization, Content-Type, Prefer, If-Match, X-Request-Id"
	corsAllowMethods  = "GET, POST, PUT, PATCH, DELETE"
	corsExposeHeaders = "Content-Range, ETag, Retry-After, X-Request-Id"
)

// ParseCORSOrigins reads a comma-separated list of origins
// (scheme://host[:port], as a browser sends them), or "*" alone. Empty is
// no origin: CORS off.
func ParseCORSOrigins(list string) ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o == AnyOrigin {
			out = append(out, o)
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fault.New(fault.Invalid, "CORS origin %q is not scheme://host[:port] (e.g. https://app.example.com) or *", o)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	if len(out) > 1 {
		for _, o := range out {
			if o == AnyOrigin {
				return nil, fault.New(fault.Invalid, "CORS origin * allows every origin: give it alone")
			}
		}
	}
	return out, nil
}

// cors answers preflights from an allowed origin before anything else runs
// (no token is asked for: a browser sends none with a preflight) and
// marks every other answer to an allowed origin. A request from another
// origin gets no CORS header, so the browser keeps the answer from its
// script.
func cors(origins []string) func(http.Handler) http.Handler {
	anyOrigin := len(origins) == 1 && origins[0] == AnyOrigin
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		allowed[o] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			if !anyOrigin {
				h.Add("Vary", "Origin")
			}
			origin := r.Header.Get("Origin")
			if origin == "" || !(anyOrigin || allowed[strings.ToLower(origin)]) {
				next.ServeHTTP(w, r)
				return
			}
			if anyOrigin {
				h.Set("Access-Control-Allow-Origin", AnyOrigin)
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			next.ServeHTTP(w, r)
		})
	}
}
