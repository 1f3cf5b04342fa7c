package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
	"github.com/littlebitlabs/minimal/wire"
)

// Prefix is where the console is served on the REST listener.
const Prefix = "/minimal/console/"

// ExchangePath takes a one-time code (POST, JSON body {"code": …}) and
// answers a token.
const ExchangePath = Prefix + "exchange"

// Bounds of a sign-in code and of the token it is exchanged for.
const (
	// CodeTTL is how long a code printed by console-link may be exchanged.
	CodeTTL = 5 * time.Minute
	// DefaultTokenTTL is the lifetime of the token a code is exchanged
	// for, unless console-link names another.
	DefaultTokenTTL = time.Hour
	// MaxTokenTTL caps it: the console's token is a short-lived one.
	MaxTokenTTL = 12 * time.Hour
	// codeBytes is the entropy of a code (256 bits: not guessable).
	codeBytes = 32
	// maxExchangeBody caps the body of an exchange.
	maxExchangeBody = 1024
)

// CSP is the Content-Security-Policy of every console answer: the pages
// load only their own files and talk only to their own origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// Handler serves the console under Prefix: the static pages and the code
// exchange, which mints through auth.Mint with the signing key.
func Handler(st *store.Store, signingKey []byte) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the build
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix, http.StripPrefix(Prefix, http.FileServerFS(files)))
	mux.Handle("POST "+ExchangePath, &exchanger{st: st, key: signingKey})
	// A code is never taken from a URL: GET of the exchange is refused.
	mux.HandleFunc("GET "+ExchangePath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		wire.WriteEnvelope(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "the sign-in code is exchanged with a POST, in the body", middleware.GetReqID(r.Context()))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// NewCode makes a one-time sign-in code for c (an identity, optional roles
// and key_type, the token's lifetime), stores its hash with an expiry of
// CodeTTL and returns the code. The roles and key_type are checked when
// the code is exchanged, by auth.Mint, against what the identity holds then.
func NewCode(ctx context.Context, st *store.Store, c store.ConsoleCode) (string, time.Time, error) {
	if c.TTL == 0 {
		c.TTL = DefaultTokenTTL
	}
	if c.TTL < 0 || c.TTL > MaxTokenTTL {
		return "", time.Time{}, fault.New(fault.Invalid, "the console token's lifetime %s is outside (0, %s]", c.TTL, MaxTokenTTL)
	}
	b := make([]byte, codeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", time.Time{}, fault.Wrap(fault.Internal, err, "console: random code")
	}
	code := base64.RawURLEncoding.EncodeToString(b)
	c.ExpiresAt = time.Now().Add(CodeTTL)
	if err := st.PutConsoleCode(ctx, hashCode(code), c); err != nil {
		return "", time.Time{}, err
	}
	return code, c.ExpiresAt, nil
}

// hashCode is the form a code is stored and looked up in.
func hashCode(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// exchanger answers POST ExchangePath.
type exchanger struct {
	st  *store.Store
	key []byte
}

// Exchanged is the answer to a code exchange.
type Exchanged struct {
	Token     string   `json:"token"`
	Identity  string   `json:"identity"`
	Org       string   `json:"org"`
	Project   string   `json:"project"`
	Roles     []string `json:"roles"`
	KeyType   string   `json:"key_type"`
	ExpiresAt string   `json:"expires_at"`
}

func (e *exchanger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := e.exchange(w, r); err != nil {
		wire.WriteError(w, err, middleware.GetReqID(r.Context()))
	}
}

func (e *exchanger) exchange(w http.ResponseWriter, r *http.Request) error {
	// A JSON body only: a cross-site form cannot send one without the
	// preflight the gateway does not grant.
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		return fault.New(fault.Invalid, "the body must be JSON (Content-Type: application/json), not %q", ct)
	}
	var in struct {
		Code string `json:"code"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxExchangeBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fault.New(fault.Invalid, "the body must be {\"code\": \"…\"}")
	}
	if in.Code == "" {
		return fault.New(fault.Invalid, "field \"code\" is required")
	}
	c, err := e.st.TakeConsoleCode(r.Context(), hashCode(in.Code), time.Now())
	if err != nil {
		return err
	}
	id, err := e.st.IdentityByID(r.Context(), c.IdentityID)
	if err != nil {
		return err
	}
	tok, err := auth.Mint(r.Context(), e.st, e.key, id, auth.MintOptions{Roles: c.Roles, KeyType: c.KeyType, TTL: c.TTL})
	if err != nil {
		return err
	}
	p, err := auth.NewVerifier(e.st, e.key).Verify(r.Context(), tok)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(Exchanged{
		Token: tok, Identity: p.Identity, Org: p.Org, Project: p.Project, Roles: p.Roles,
		KeyType: p.KeyType.String(), ExpiresAt: p.ExpiresAt.UTC().Format(time.RFC3339),
	})
	return nil
}
