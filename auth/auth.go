package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Token claims fixed by the gateway.
const (
	Issuer   = "minimal"
	Audience = "minimal"
	// HeaderName is the header that carries a token.
	HeaderName = "LB-Access-Token"
	// MaxTokenBytes caps the size of a token accepted from a header.
	MaxTokenBytes = 4096
	// MaxTTL caps the lifetime of any minted token.
	MaxTTL = 366 * 24 * time.Hour
	// MaxAncestors caps how many tokens a token may descend from: a token
	// minted through MintNarrower from a token with MaxAncestors ancestors
	// is refused. It bounds the size of a token and of its revocation
	// lookup.
	MaxAncestors = 16

	signingKeySetting = "token_signing_key"
	cacheTTL          = time.Second
)

// Principal is who is acting, as proven by a verified token and confirmed
// against the store's current state of the identity.
type Principal struct {
	IdentityID string
	Identity   string // identity name
	Kind       string // user, service or mcp
	OrgID      string
	Org        string // org abbreviation, as in URLs
	ProjectID  string
	Project    string // project abbreviation, as in URLs
	SpaceID    string
	Space      string
	// Roles are the token's roles that the identity still holds, sorted.
	Roles []string
	// KeyType is the token's key_type, narrowed by the identity's current one.
	KeyType query.Mask
	Claims  map[string]any
	TokenID string
	// Ancestors are the ids of the tokens the token was minted from, the
	// root first and its direct parent last (Claims.Ancestors).
	Ancestors []string
	ExpiresAt time.Time
}

// Subject is the principal as the permission gates see it.
func (p *Principal) Subject() permissions.Subject {
	return permissions.Subject{
		ProjectID: p.ProjectID, Roles: p.Roles, KeyType: p.KeyType,
		Vars: permissions.Vars{Identity: p.Identity, Space: p.Space, Org: p.Org, Project: p.Project, Claims: p.Claims},
	}
}

// Claims is the JWT payload.
type Claims struct {
	Org      string   `json:"org"`
	Project  string   `json:"project"`
	Space    string   `json:"space"`
	Identity string   `json:"identity"`
	Kind     string   `json:"kind"`
	Roles    []string `json:"roles"`
	KeyType  string   `json:"key_type"`
	// Ancestors are the ids (jti) of the tokens this one was minted from
	// through MintNarrower, the root first and the direct parent last;
	// revoking any of them revokes this token. Empty for a token minted
	// from an identity (CLI, admin API, bootstrap).
	Ancestors []string `json:"ancestors,omitempty"`
	jwt.RegisteredClaims
}

type ctxKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// PrincipalKey is the key WithPrincipal keeps a Principal under, for a
// context that keeps the value itself (observe.Attach).
func PrincipalKey() any { return ctxKey{} }

// PrincipalFrom returns the Principal of a context, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// FromRequest extracts the raw token from LB-Access-Token or an
// Authorization: Bearer header. Tokens are never read from the URL or cookies.
func FromRequest(r *http.Request) (string, error) {
	// The map is read by the canonical keys: Header.Get would make the
	// canonical form of HeaderName anew on every request.
	tok := headerValue(r.Header, headerKey)
	if tok == "" {
		if h := headerValue(r.Header, "Authorization"); h != "" {
			scheme, rest, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return "", fault.New(fault.Unauthenticated, "Authorization header must be 'Bearer <token>'")
			}
			tok = strings.TrimSpace(rest)
		}
	}
	if tok == "" {
		return "", fault.New(fault.Unauthenticated, "missing access token: send it in the %s header", HeaderName)
	}
	if len(tok) > MaxTokenBytes {
		return "", fault.New(fault.Unauthenticated, "access token is larger than %d bytes", MaxTokenBytes)
	}
	return tok, nil
}

// headerKey is HeaderName in the canonical form net/http keeps it under.
var headerKey = http.CanonicalHeaderKey(HeaderName)

// headerValue is h.Get(key) for a key in canonical form.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// SigningKey loads the token signing key from the store, creating it on
// first use. It is kept sealed under the master key.
func SigningKey(ctx context.Context, st *store.Store) ([]byte, error) {
	v, ok, err := st.SealedSetting(ctx, signingKeySetting)
	if err != nil {
		return nil, err
	}
	if ok {
		key, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(key) < 32 {
			return nil, fault.New(fault.Internal, "stored token signing key is malformed")
		}
		return key, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	// Insert only if absent: replicas starting together on an empty control
	// plane all get here, and the first key stored must stay the one key.
	if _, err := st.PutSealedSettingIfAbsent(ctx, signingKeySetting, base64.StdEncoding.EncodeToString(key)); err != nil {
		return nil, err
	}
	// Ours or a racer's: the stored value wins.
	return SigningKey(ctx, st)
}

// MintOptions narrow a token below what its identity holds. Zero values
// mean "everything the identity holds" and DefaultTTL.
type MintOptions struct {
	Roles   []string
	KeyType string
	TTL     time.Duration
	// Ancestors become the token's Claims.Ancestors (MintNarrower sets
	// them); at most MaxAncestors.
	Ancestors []string
}

// DefaultTTL is the lifetime of a token minted without a TTL.
const DefaultTTL = 24 * time.Hour

// Mint signs a token for an identity. It refuses roles the identity does not
// hold, a key_type wider than the identity's, and a TTL over MaxTTL.
func Mint(ctx context.Context, st *store.Store, key []byte, id store.Identity, opt MintOptions) (string, error) {
	if !id.Enabled {
		return "", fault.New(fault.Forbidden, "identity %q is disabled", id.Name)
	}
	roles := opt.Roles
	if roles == nil {
		roles = id.Roles
	}
	for _, r := range roles {
		if !slices.Contains(id.Roles, r) {
			return "", fault.New(fault.Forbidden, "identity %q does not hold role %q (it holds %v)", id.Name, r, id.Roles)
		}
	}
	held, err := query.ParseMask(id.KeyType)
	if err != nil {
		return "", err
	}
	kt := held
	if opt.KeyType != "" {
		if kt, err = query.ParseMask(opt.KeyType); err != nil {
			return "", err
		}
		if !held.Covers(kt) {
			return "", fault.New(fault.Forbidden, "key_type %s is wider than identity %q holds (%s)", kt, id.Name, held)
		}
	}
	ttl := opt.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < 0 || ttl > MaxTTL {
		return "", fault.New(fault.Invalid, "ttl %s is outside (0, %s]", ttl, MaxTTL)
	}
	if len(opt.Ancestors) > MaxAncestors {
		return "", fault.New(fault.Forbidden, "a token may descend from at most %d tokens", MaxAncestors)
	}
	proj, err := st.ProjectByID(ctx, id.ProjectID)
	if err != nil {
		return "", err
	}
	org, err := st.OrgByID(ctx, proj.OrgID)
	if err != nil {
		return "", err
	}
	space, err := st.SpaceByID(ctx, id.SpaceID)
	if err != nil {
		return "", err
	}
	now := time.Now()
	c := Claims{
		Org: org.Abbr, Project: proj.Abbr, Space: space.Name,
		Identity: id.Name, Kind: id.Kind, Roles: append([]string{}, roles...), KeyType: kt.String(),
		Ancestors: slices.Clone(opt.Ancestors),
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    Issuer,
			Audience:  jwt.ClaimStrings{Audience},
			Subject:   id.ID,
			ID:        uuid.NewString(),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
}

// Verifier checks tokens against the signing key and the store's current
// state. Identity, revocation and space lookups are cached for about a
// second (ttlCache), so disabling an identity, revoking a token (or one of
// the tokens it was minted from) or switching MCP off for a space takes
// effect within seconds.
type Verifier struct {
	st     *store.Store
	key    []byte
	parser *jwt.Parser
	now    func() time.Time

	mu    sync.Mutex
	toks  map[string]cachedPrincipal
	ids   ttlCache[store.Identity]
	revok ttlCache[bool]
	projs ttlCache[cachedProject]
	spcs  ttlCache[store.Space]
}

type cachedPrincipal struct {
	p  *Principal
	at time.Time
}

type cachedProject struct {
	orgID, org, project, space string
}

// ttlCache holds answers read from the store by key, each with the time it
// was read; Verifier.mu guards it. It is emptied when it holds limit
// entries, which bounds its memory.
type ttlCache[V any] struct {
	m     map[string]stamped[V]
	limit int
}

type stamped[V any] struct {
	v   V
	err error
	at  time.Time
}

func newTTLCache[V any](limit int) ttlCache[V] {
	return ttlCache[V]{m: map[string]stamped[V]{}, limit: limit}
}

// through returns c's answer for key when it was read less than ttl ago,
// else load's, which it keeps unless load failed with an error keep does
// not accept (nil keep: none).
func through[V any](v *Verifier, c *ttlCache[V], key string, ttl time.Duration, load func() (V, error), keep func(error) bool) (V, error) {
	now := v.now()
	v.mu.Lock()
	hit, ok := c.m[key]
	v.mu.Unlock()
	if ok && now.Sub(hit.at) < ttl {
		return hit.v, hit.err
	}
	val, err := load()
	if err != nil && (keep == nil || !keep(err)) {
		return val, err
	}
	v.mu.Lock()
	if len(c.m) >= c.limit {
		c.m = map[string]stamped[V]{}
	}
	c.m[key] = stamped[V]{v: val, err: err, at: now}
	v.mu.Unlock()
	return val, err
}

// NewVerifier builds a Verifier.
func NewVerifier(st *store.Store, key []byte) *Verifier {
	return &Verifier{
		st:  st,
		key: key,
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithIssuer(Issuer),
			jwt.WithAudience(Audience),
			jwt.WithLeeway(5*time.Second),
		),
		now:   time.Now,
		toks:  map[string]cachedPrincipal{},
		ids:   newTTLCache[store.Identity](100000),
		revok: newTTLCache[bool](100000),
		projs: newTTLCache[cachedProject](10000),
		spcs:  newTTLCache[store.Space](10000),
	}
}

// Verify checks a raw token and returns its Principal. Every failure is a
// fault of kind Unauthenticated with a message saying why. A verified
// result is reused for up to a second, the same bound as the identity and
// revocation caches, so changes reach live tokens within about two seconds.
// The returned Principal is shared: callers must not modify it.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	if len(raw) > MaxTokenBytes {
		return nil, fault.New(fault.Unauthenticated, "access token is larger than %d bytes", MaxTokenBytes)
	}
	now := v.now()
	v.mu.Lock()
	hit, ok := v.toks[raw]
	v.mu.Unlock()
	if ok && now.Sub(hit.at) < cacheTTL && now.Before(hit.p.ExpiresAt) {
		return hit.p, nil
	}
	p, err := v.verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if len(v.toks) > 10000 {
		v.toks = map[string]cachedPrincipal{}
	}
	v.toks[raw] = cachedPrincipal{p: p, at: now}
	v.mu.Unlock()
	return p, nil
}

// verify does the work of Verify without the one-second result cache.
func (v *Verifier) verify(ctx context.Context, raw string) (*Principal, error) {
	var c Claims
	_, err := v.parser.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return v.key, nil })
	if err != nil {
		return nil, fault.Wrap(fault.Unauthenticated, err, "invalid access token: %s", tokenProblem(err))
	}
	if c.ID == "" || c.Subject == "" {
		return nil, fault.New(fault.Unauthenticated, "invalid access token: missing jti or sub")
	}
	if len(c.Ancestors) > MaxAncestors || slices.Contains(c.Ancestors, "") {
		return nil, fault.New(fault.Unauthenticated, "invalid access token: bad ancestors")
	}
	mask, err := query.ParseMask(c.KeyType)
	if err != nil {
		return nil, fault.New(fault.Unauthenticated, "invalid access token: bad key_type")
	}
	// The lookups below ask the control plane; one that does not answer
	// must not hold every request of both faces.
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	p, err := v.lookup(ctx, &c, mask)
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		return nil, fault.Wrap(fault.Unavailable, err, "the control plane did not answer within %s", StoreTimeout)
	}
	return p, err
}

// StoreTimeout bounds the control-plane lookups of one token verification:
// past it the request answers 503 (Retry-After) instead of waiting on a
// control plane that does not answer.
const StoreTimeout = 5 * time.Second

// lookup checks a parsed token against the store: revocation, identity,
// project, and narrows its roles and key_type to what the identity holds.
func (v *Verifier) lookup(ctx context.Context, c *Claims, mask query.Mask) (*Principal, error) {
	revoked, err := v.revoked(ctx, c.ID, c.Ancestors)
	if err != nil {
		return nil, err
	}
	if revoked {
		return nil, fault.New(fault.Unauthenticated, "access token has been revoked")
	}
	id, err := v.identity(ctx, c.Subject)
	if err != nil {
		if fault.KindOf(err) == fault.NotFound {
			return nil, fault.New(fault.Unauthenticated, "access token names an identity that no longer exists")
		}
		return nil, err
	}
	if !id.Enabled {
		return nil, fault.New(fault.Unauthenticated, "identity %q is disabled", id.Name)
	}
	held, err := query.ParseMask(id.KeyType)
	if err != nil {
		return nil, err
	}
	pc, err := v.project(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.Org != pc.org || c.Project != pc.project || c.Space != pc.space || c.Identity != id.Name {
		return nil, fault.New(fault.Unauthenticated, "access token does not match its identity's org, project, space or name")
	}
	roles := make([]string, 0, len(c.Roles))
	for _, r := range c.Roles {
		if slices.Contains(id.Roles, r) && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	slices.Sort(roles)
	return &Principal{
		IdentityID: id.ID, Identity: id.Name, Kind: id.Kind,
		OrgID: pc.orgID, Org: pc.org, ProjectID: id.ProjectID, Project: pc.project,
		SpaceID: id.SpaceID, Space: pc.space,
		Roles: roles, KeyType: mask & held, Claims: id.Claims,
		TokenID: c.ID, Ancestors: c.Ancestors, ExpiresAt: c.ExpiresAt.Time,
	}, nil
}

func tokenProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token has expired"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "signature or algorithm is not accepted"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "a required claim is missing"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer), errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "issuer or audience is not this gateway"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token is not valid yet"
	}
	return "token is not valid"
}

// revoked reports whether the token jti, or one of the tokens it was
// minted from, is revoked: one lookup, cached by jti (a token's ancestors
// are signed into it, so they are the same at every lookup).
func (v *Verifier) revoked(ctx context.Context, jti string, ancestors []string) (bool, error) {
	return through(v, &v.revok, jti, cacheTTL, func() (bool, error) {
		return v.st.IsRevoked(ctx, append([]string{jti}, ancestors...)...)
	}, nil)
}

// identity reads an identity; an unknown one is remembered too.
func (v *Verifier) identity(ctx context.Context, id string) (store.Identity, error) {
	return through(v, &v.ids, id, cacheTTL, func() (store.Identity, error) { return v.st.IdentityByID(ctx, id) },
		func(err error) bool { return fault.KindOf(err) == fault.NotFound })
}

// Space returns the space with the given id as the store had it at most
// about a second ago, like the identity a token names: switching MCP off for
// a space reaches live tokens as fast as disabling an identity does (at
// once after a write through this process or any PostgreSQL replica, see
// Follow). An unknown space is fault.NotFound and is not cached.
func (v *Verifier) Space(ctx context.Context, id string) (store.Space, error) {
	return through(v, &v.spcs, id, cacheTTL, func() (store.Space, error) { return v.st.SpaceByID(ctx, id) }, nil)
}

// project resolves the org and project of an identity and its space name;
// they do not change, so they are cached for a minute.
func (v *Verifier) project(ctx context.Context, id store.Identity) (cachedProject, error) {
	return through(v, &v.projs, id.ProjectID+"/"+id.SpaceID, time.Minute, func() (cachedProject, error) {
		p, err := v.st.ProjectByID(ctx, id.ProjectID)
		if err != nil {
			return cachedProject{}, err
		}
		o, err := v.st.OrgByID(ctx, p.OrgID)
		if err != nil {
			return cachedProject{}, err
		}
		s, err := v.st.SpaceByID(ctx, id.SpaceID)
		if err != nil {
			return cachedProject{}, err
		}
		return cachedProject{orgID: o.ID, org: o.Abbr, project: p.Abbr, space: s.Name}, nil
	}, nil)
}

// MintNarrower signs a token for the caller's own identity that holds no
// more than the caller's token: roles ⊆ its roles, key_type ⊆ its
// key_type, expiry ≤ its expiry. Zero options inherit the caller's values
// (with DefaultTTL capped by the caller's expiry). The new token names the
// caller's token and its ancestors (Claims.Ancestors), so revoking any of
// them revokes it; a caller whose token has MaxAncestors ancestors is
// refused (Forbidden). opt.Ancestors is ignored.
func MintNarrower(ctx context.Context, st *store.Store, key []byte, p *Principal, opt MintOptions) (string, Claims, error) {
	id, err := st.IdentityByID(ctx, p.IdentityID)
	if err != nil {
		return "", Claims{}, err
	}
	roles := opt.Roles
	if roles == nil {
		roles = p.Roles
	}
	for _, r := range roles {
		if !slices.Contains(p.Roles, r) {
			return "", Claims{}, fault.New(fault.Forbidden, "cannot grant role %q: the calling token holds %v", r, p.Roles)
		}
	}
	kt := p.KeyType
	if opt.KeyType != "" {
		if kt, err = query.ParseMask(opt.KeyType); err != nil {
			return "", Claims{}, err
		}
		if !p.KeyType.Covers(kt) {
			return "", Claims{}, fault.New(fault.Forbidden, "key_type %s is wider than the calling token's %s", kt, p.KeyType)
		}
	}
	remaining := time.Until(p.ExpiresAt)
	ttl := opt.TTL
	if ttl == 0 {
		ttl = min(DefaultTTL, remaining)
	}
	if ttl <= 0 {
		return "", Claims{}, fault.New(fault.Invalid, "ttl must be positive")
	}
	if ttl > remaining+time.Second {
		return "", Claims{}, fault.New(fault.Forbidden, "ttl %s outlives the calling token (expires in %s)", ttl.Round(time.Second), remaining.Round(time.Second))
	}
	if p.TokenID == "" {
		return "", Claims{}, fault.New(fault.Forbidden, "only a token can mint a narrower token")
	}
	if len(p.Ancestors) >= MaxAncestors {
		return "", Claims{}, fault.New(fault.Forbidden, "the calling token descends from %d tokens, the most a token may; mint from a token nearer the root", len(p.Ancestors))
	}
	anc := append(slices.Clip(p.Ancestors), p.TokenID)
	tok, err := Mint(ctx, st, key, id, MintOptions{Roles: append([]string{}, roles...), KeyType: kt.String(), TTL: min(ttl, remaining), Ancestors: anc})
	if err != nil {
		return "", Claims{}, err
	}
	var c Claims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		return "", Claims{}, fault.Wrap(fault.Internal, err, "minted token does not parse")
	}
	return tok, c, nil
}

// PrincipalFor builds the Principal an identity would have with a token
// holding everything it holds. Operators' tools (policy explain) use it;
// requests always go through Verify.
func PrincipalFor(ctx context.Context, st *store.Store, id store.Identity) (*Principal, error) {
	kt, err := query.ParseMask(id.KeyType)
	if err != nil {
		return nil, err
	}
	v := NewVerifier(st, nil)
	pc, err := v.project(ctx, id)
	if err != nil {
		return nil, err
	}
	roles := slices.Clone(id.Roles)
	slices.Sort(roles)
	return &Principal{
		IdentityID: id.ID, Identity: id.Name, Kind: id.Kind,
		OrgID: pc.orgID, Org: pc.org, ProjectID: id.ProjectID, Project: pc.project,
		SpaceID: id.SpaceID, Space: pc.space, Roles: roles, KeyType: kt, Claims: id.Claims,
		ExpiresAt: time.Now().Add(DefaultTTL),
	}, nil
}
