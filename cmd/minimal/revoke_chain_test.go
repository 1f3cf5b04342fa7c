package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// mintChild mints a token from parent through POST /minimal/api/auth/v1/tokens
// and returns the answer's status and, on 201, the token and its jti.
func mintChild(t *testing.T, addr, parent string) (int, string, string) {
	t.Helper()
	// No ttl: the child lives as long as the default allows within its
	// parent's remaining life, so a slow machine never asks for a child that
	// would outlive a parent minted a second before (refused, 403).
	code, _, body := httpDo(t, "POST", "http://"+addr+"/minimal/api/auth/v1/tokens", parent, `{}`)
	var out struct {
		Token string `json:"token"`
		JTI   string `json:"jti"`
	}
	if code == 201 {
		if err := json.Unmarshal([]byte(body), &out); err != nil || out.Token == "" || out.JTI == "" {
			t.Fatalf("mint answer %s: %v", body, err)
		}
	}
	return code, out.Token, out.JTI
}

// TestRevokeParentRevokesChildren proves that a token minted through the
// API from another dies with it: revoking a token (by jti or by the token,
// from the CLI, while the server runs) makes every token minted from it,
// children and grandchildren, answer 401 within seconds, while its own
// ancestors and unrelated tokens keep working. A chain deeper than
// auth.MaxAncestors is refused.
func TestRevokeParentRevokesChildren(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	notes := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0"
	cliMint := func() string {
		out, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "admin", "--ttl", "2h")
		if code != 0 {
			t.Fatalf("mint: %s", errOut)
		}
		return strings.TrimSpace(out)
	}
	child := func(parent string) (string, string) {
		t.Helper()
		code, tok, jti := mintChild(t, s.addr, parent)
		if code != 201 {
			t.Fatalf("mint from parent: %d", code)
		}
		return tok, jti
	}
	status := func(tok string) int {
		code, _, _ := get(t, notes, tok)
		return code
	}
	// waitStatuses polls until every token answers its wanted status, then
	// checks that they keep answering it past the caches' lifetime.
	waitStatuses := func(what string, want map[string]int) {
		t.Helper()
		start := time.Now()
		for {
			ok := true
			for tok, code := range want {
				if status(tok) != code {
					ok = false
				}
			}
			if ok {
				t.Logf("%s: in force after %v", what, time.Since(start).Round(time.Millisecond))
				break
			}
			if time.Since(start) > 5*time.Second {
				for tok, code := range want {
					if got := status(tok); got != code {
						t.Fatalf("%s: a token answers %d, want %d", what, got, code)
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(2500 * time.Millisecond)
		for tok, code := range want {
			if got := status(tok); got != code {
				t.Fatalf("%s: after the caches expired a token answers %d, want %d", what, got, code)
			}
		}
	}

	parent := cliMint()
	other := cliMint()
	kid, kidJTI := child(parent)
	grandkid, _ := child(kid)
	greatGrandkid, _ := child(grandkid)
	kid2, _ := child(parent)
	for _, tok := range []string{parent, other, kid, grandkid, greatGrandkid, kid2} {
		if code := status(tok); code != 200 {
			t.Fatalf("before any revocation: %d", code)
		}
	}

	// Revoking the child by jti takes its descendants, not its parent or
	// its sibling.
	if out, errOut, code := cli(t, "token", "revoke", "--data-dir", dir, kidJTI); code != 0 {
		t.Fatalf("revoke child: %s %s", out, errOut)
	}
	waitStatuses("child revoked", map[string]int{kid: 401, grandkid: 401, greatGrandkid: 401, parent: 200, kid2: 200, other: 200})
	// A revoked token cannot mint a way out.
	if code, _, _ := mintChild(t, s.addr, grandkid); code != 401 {
		t.Fatalf("a revoked grandchild mints: %d", code)
	}

	// Revoking the parent by the token itself takes every token minted
	// from it; an unrelated token of the same identity lives on.
	if out, errOut, code := cli(t, "token", "revoke", "--data-dir", dir, "--token", parent); code != 0 {
		t.Fatalf("revoke parent: %s %s", out, errOut)
	}
	waitStatuses("parent revoked", map[string]int{parent: 401, kid2: 401, other: 200})

	// The chain is bounded: a token with 16 ancestors mints no further.
	tok := other
	for i := range 16 {
		code, next, _ := mintChild(t, s.addr, tok)
		if code != 201 {
			t.Fatalf("generation %d: %d", i+1, code)
		}
		tok = next
	}
	if code := status(tok); code != 200 {
		t.Fatalf("16th generation: %d", code)
	}
	if code, _, _ := mintChild(t, s.addr, tok); code != 403 {
		t.Fatalf("17th generation: %d, want 403", code)
	}
}
