package store

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// TestConsoleCodes: a sign-in code is taken once, by one of many racing
// callers, and an expired one not at all; making a code purges the
// expired ones.
func TestConsoleCodes(t *testing.T) { eachBackend(t, testConsoleCodes) }

func testConsoleCodes(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	now := time.Now()
	c := ConsoleCode{IdentityID: "id-1", Roles: []string{"admin"}, KeyType: "-r--", TTL: time.Hour, ExpiresAt: now.Add(5 * time.Minute)}
	if err := s.PutConsoleCode(ctx, "h1", c); err != nil {
		t.Fatal(err)
	}
	got, err := s.TakeConsoleCode(ctx, "h1", now)
	if err != nil || got.IdentityID != "id-1" || got.KeyType != "-r--" || got.TTL != time.Hour || len(got.Roles) != 1 {
		t.Fatalf("take: %+v %v", got, err)
	}
	_, err = s.TakeConsoleCode(ctx, "h1", now)
	wantKind(t, err, fault.Unauthenticated)
	_, err = s.TakeConsoleCode(ctx, "never-made", now)
	wantKind(t, err, fault.Unauthenticated)

	// Expired: refused, and gone.
	if err := s.PutConsoleCode(ctx, "h2", ConsoleCode{IdentityID: "id-1", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, err = s.TakeConsoleCode(ctx, "h2", now.Add(time.Minute))
	wantKind(t, err, fault.Unauthenticated)
	_, err = s.TakeConsoleCode(ctx, "h2", now)
	wantKind(t, err, fault.Unauthenticated)

	// Making a code deletes the expired ones.
	if err := s.PutConsoleCode(ctx, "h3", ConsoleCode{IdentityID: "id-1", ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutConsoleCode(ctx, "h4", ConsoleCode{IdentityID: "id-1", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Setting(ctx, consoleCodePrefix+"h3"); ok || err != nil {
		t.Fatalf("expired code kept: %v %v", ok, err)
	}

	// Eight callers race for one code: exactly one gets it.
	if err := s.PutConsoleCode(ctx, "race", c); err != nil {
		t.Fatal(err)
	}
	var won, lost atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := s.TakeConsoleCode(ctx, "race", now)
			switch fault.KindOf(err) {
			case fault.Unauthenticated:
				lost.Add(1)
			default:
				if err == nil {
					won.Add(1)
				} else {
					t.Errorf("take: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || lost.Load() != 7 {
		t.Fatalf("%d callers got the code, %d were refused", won.Load(), lost.Load())
	}

	if err := s.PutConsoleCode(ctx, "", c); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("empty hash: %v", err)
	}
}
