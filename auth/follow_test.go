package auth

import (
	"context"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// Follow makes a write to the store reach a cached token at once: with the
// verifier's clock frozen its caches never expire, so only the flush can
// make a disabled identity's token fail.
func TestFollowFlushesCaches(t *testing.T) {
	t.Setenv(store.EnvControlDSN, "")
	t.Setenv(store.EnvMasterKey, "")
	ctx := t.Context()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.CreateOrg(ctx, "O", "o")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := st.CreateProject(ctx, org.ID, "P", "p")
	if err != nil {
		t.Fatal(err)
	}
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
