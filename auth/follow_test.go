package auth

import (
	"context"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// newProject opens a store of its own on SQLite (closed with the test) and
// creates an org and a project in it.
func newProject(t *testing.T) (*store.Store, store.Project) {
	t.Helper()
	t.Setenv(store.EnvControlDSN, "")
	t.Setenv(store.EnvMasterKey, "")
	ctx := t.Context()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	org, err := st.CreateOrg(ctx, "O", "o")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := st.CreateProject(ctx, org.ID, "P", "p")
	if err != nil {
		t.Fatal(err)
	}
	return st, proj
}

// Follow makes a write to the store reach a cached token at once: with the
// verifier's clock frozen its caches never expire, so only the flush can
// make a disabled identity's token fail.
func TestFollowFlushesCaches(t *testing.T) {
	ctx := t.Context()
	st, proj := newProject(t)
	space, err := st.CreateSpace(ctx, proj.ID, "main", false)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateIdentity(ctx, store.Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: "u", Kind: store.KindUser, KeyType: "crud", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	key, err := SigningKey(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Mint(ctx, st, key, id, MintOptions{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(st, key)
	frozen := time.Now()
	v.now = func() time.Time { return frozen }
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := st.SetIdentityEnabled(ctx, id.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("without Follow the cached answer should stand: %v", err)
	}

	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go v.Follow(fctx)
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Follow subscribes in its own goroutine: write until it has seen one.
		if err := st.SetIdentityEnabled(ctx, id.ID, false); err != nil {
			t.Fatal(err)
		}
		_, err := v.Verify(ctx, tok)
		if fault.KindOf(err) == fault.Unauthenticated {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("disabled identity's token still verifies with Follow running: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSpaceCache: a space's MCP switch is read once a second at most, and
// a flush (a write announced to Follow) or the cache's age makes the next
// read see the store again. An unknown space is not cached.
func TestSpaceCache(t *testing.T) {
	ctx := t.Context()
	st, proj := newProject(t)
	space, err := st.CreateSpace(ctx, proj.ID, "main", true)
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(st, []byte("k"))
	clock := time.Now()
	v.now = func() time.Time { return clock }
	mcpOn := func() bool {
		t.Helper()
		sp, err := v.Space(ctx, space.ID)
		if err != nil {
			t.Fatal(err)
		}
		return sp.MCPEnabled
	}
	if !mcpOn() {
		t.Fatal("MCP off at first read")
	}
	if err := st.SetSpaceMCP(ctx, space.ID, false); err != nil {
		t.Fatal(err)
	}
	if !mcpOn() {
		t.Fatal("the cached switch should stand within the second")
	}
	clock = clock.Add(cacheTTL)
	if mcpOn() {
		t.Fatal("after a second the store's switch (off) should be read")
	}
	if err := st.SetSpaceMCP(ctx, space.ID, true); err != nil {
		t.Fatal(err)
	}
	v.flush()
	if !mcpOn() {
		t.Fatal("after a flush the store's switch (on) should be read")
	}
	if _, err := v.Space(ctx, "nope"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("unknown space: %v", err)
	}
	if _, ok := v.spcs.m["nope"]; ok {
		t.Fatal("an unknown space was cached")
	}
}
