package auth

import (
	"context"

	"github.com/littlebitlabs/minimal/store"
)

// Follow empties the verifier's token, identity, revocation and space
// caches each time the store announces a write (store.Changes), until ctx
// ends. A role removed, an identity disabled, a token revoked or MCP
// switched off for a space — through any replica of
// a PostgreSQL control plane, or through this process — is then in force
// at the next request instead of when the caches expire. The caches still
// expire on their own, which bounds what an announcement that never comes
// (a write by another process on SQLite) can leave stale.
func (v *Verifier) Follow(ctx context.Context) {
	for range v.st.Changes(ctx) {
		v.flush()
	}
}

// flush forgets every cached answer that a write to the store can change.
// Org, project and space names are kept: they never change (a space's MCP
// switch does, and is forgotten).
func (v *Verifier) flush() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.toks = map[string]cachedPrincipal{}
	v.ids = newTTLCache[store.Identity](v.ids.limit)
	v.revok = newTTLCache[bool](v.revok.limit)
	v.spcs = newTTLCache[store.Space](v.spcs.limit)
}
