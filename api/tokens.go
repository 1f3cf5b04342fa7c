package api

import (
	"net/http"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
)

// TokensPath is where an authenticated identity mints narrower tokens.
const TokensPath = "/minimal/api/auth/v1/tokens"

// mintToken answers POST /minimal/api/auth/v1/tokens with a token for the
// caller's own identity holding no more than the calling token.
// Body (all optional): {"roles":[…], "key_type":"-r--", "ttl":"1h"}.
func (s *Server) mintToken(w http.ResponseWriter, r *http.Request) {
	body, err := decodeBody(w, r, s.cfg.MaxBodyBytes, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var opt auth.MintOptions
	if body != nil {
		m, ok := body.(map[string]any)
		if !ok {
			writeError(w, r, fault.New(fault.Invalid, "body must be a JSON object"))
			return
		}
		for k, v := range m {
			switch k {
			case "roles":
				arr, ok := v.([]any)
				if !ok {
					writeError(w, r, fault.New(fault.Invalid, "roles must be an array of strings"))
					return
				}
				opt.Roles = []string{}
				for _, x := range arr {
					s, ok := x.(string)
					if !ok {
						writeError(w, r, fault.New(fault.Invalid, "roles must be an array of strings"))
						return
					}
					opt.Roles = append(opt.Roles, s)
				}
			case "key_type":
				s, ok := v.(string)
				if !ok {
					writeError(w, r, fault.New(fault.Invalid, "key_type must be a string such as -r--"))
					return
				}
				opt.KeyType = s
			case "ttl":
				s, ok := v.(string)
				d, err := time.ParseDuration(s)
				if !ok || err != nil {
					writeError(w, r, fault.New(fault.Invalid, "ttl must be a duration such as 30m or 2h"))
					return
				}
				opt.TTL = d
			default:
				writeError(w, r, fault.New(fault.Invalid, "unknown field %q (roles, key_type, ttl)", k))
				return
			}
		}
	}
	p := auth.PrincipalFrom(r.Context())
	tok, c, err := auth.MintNarrower(r.Context(), s.st, s.key, p, opt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": tok, "jti": c.ID, "roles": c.Roles, "key_type": c.KeyType,
		"expires_at": c.ExpiresAt.Time.UTC().Format(time.RFC3339),
	})
}
