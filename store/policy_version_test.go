package store

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

func TestPolicyVersion(t *testing.T) { eachBackend(t, testPolicyVersion) }

// testPolicyVersion: every write of the policy advances its version; a
// write at a version that moved is refused (Conflict, ErrStaleVersion) and
// changes nothing.
func testPolicyVersion(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "a")
	version := func() int64 {
		t.Helper()
		_, v, err := s.VersionedPolicy(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := version(); v != 1 {
		t.Fatalf("a new project's policy is at version %d, want 1", v)
	}
	v2, err := s.ReplacePolicyAt(ctx, p.ID, examplePolicy(), 1)
	if err != nil || v2 != 2 || version() != 2 {
		t.Fatalf("ReplacePolicyAt(1) = %d, %v; stored version %d", v2, err, version())
	}

	before := seq(t, s)
	stale := examplePolicy()
	stale.Locks = nil
	_, err = s.ReplacePolicyAt(ctx, p.ID, stale, 1)
	wantKind(t, err, fault.Conflict)
	if !errors.Is(err, ErrStaleVersion) {
		t.Fatalf("a stale write: %v, want ErrStaleVersion in the chain", err)
	}
	got, v, err := s.VersionedPolicy(ctx, p.ID)
	if err != nil || v != 2 || !reflect.DeepEqual(strip(got), must[Policy](t)(normPolicy(examplePolicy()))) {
		t.Fatalf("after a stale write: version %d, %v, policy %+v", v, err, got)
	}
	if seq(t, s) != before {
		t.Fatal("a refused write moved the change counter")
	}

	if err := s.ReplacePolicy(ctx, p.ID, stale); err != nil || version() != 3 {
		t.Fatalf("ReplacePolicy: %v, version %d, want 3", err, version())
	}
	if _, err := s.AddLock(ctx, Lock{ProjectID: p.ID, Pattern: "pg", Mask: "-r--"}); err != nil || version() != 4 {
		t.Fatalf("AddLock: %v, version %d, want 4", err, version())
	}
	if err := s.RemoveLock(ctx, p.ID, "pg"); err != nil || version() != 5 {
		t.Fatalf("RemoveLock: %v, version %d, want 5", err, version())
	}
	_, err = s.ReplacePolicyAt(ctx, p.ID, stale, 0)
	wantKind(t, err, fault.Invalid)
	_, err = s.ReplacePolicyAt(ctx, "nope", stale, 5)
	wantKind(t, err, fault.NotFound)
	_, _, err = s.VersionedPolicy(ctx, "nope")
	wantKind(t, err, fault.NotFound)
}

func TestPolicyVersionTwoStores(t *testing.T) { eachBackend(t, testPolicyVersionTwoStores) }

// testPolicyVersionTwoStores: two stores on one control plane (two
// replicas) each add locks by read, edit, ReplacePolicyAt, retrying on a
// stale version: no lock is lost.
func testPolicyVersionTwoStores(t *testing.T) {
	a, dir := newStore(t)
	b := openStore(t, dir)
	ctx := t.Context()
	_, p, _ := tenant(t, a, "a")
	const each = 15
	var wg sync.WaitGroup
	var stale sync.Map
	for i, s := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for j := range each {
				pattern := fmt.Sprintf("pg/w%d/t%d", i, j)
				for {
					pol, v, err := s.VersionedPolicy(ctx, p.ID)
					if err != nil {
						t.Error(err)
						return
					}
					pol.Locks = append(pol.Locks, Lock{Pattern: pattern, Mask: "-r--"})
					_, err = s.ReplacePolicyAt(ctx, p.ID, pol, v)
					if errors.Is(err, ErrStaleVersion) {
						n, _ := stale.LoadOrStore(i, new(int))
						*n.(*int)++
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	pol, v, err := a.VersionedPolicy(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Locks) != 4*each || v != 1+4*each {
		t.Fatalf("%d locks at version %d, want %d at %d", len(pol.Locks), v, 4*each, 1+4*each)
	}
	retries := 0
	stale.Range(func(_, n any) bool { retries += *n.(*int); return true })
	t.Logf("%d edits through two stores, %d refused as stale and retried", 4*each, retries)
}
