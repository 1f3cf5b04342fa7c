package main

import (
	"strings"
	"testing"
)

func TestPolicyExplain(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir) // bootstraps the data dir
	s.stop(t)
	notes := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"
	out, errOut, code := cli(t, "policy", "explain", "--data-dir", dir, "--identity", "admin", "--method", "GET", "--path", notes+"?ps=5&pg=0&title=eq.Tokens")
	if code != 0 {
		t.Fatalf("explain: %d %s", code, errOut)
	}
	for _, want := range []string{"1 lock mask  pass", "2 template   pass", "3 row scope  pass", "sql      SELECT id, data, created_at, updated_at FROM rows WHERE", "args     [$.\"title\" Tokens 5 0]", "outcome  allowed (not executed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = cli(t, "policy", "explain", "--data-dir", dir, "--identity", "admin", "--method", "DELETE", "--path", notes)
	if code != 0 || !strings.Contains(out, "outcome  INVALID a delete needs at least one filter") {
		t.Fatalf("filterless delete: %d\n%s", code, out)
	}
	out, _, _ = cli(t, "policy", "explain", "--data-dir", dir, "--identity", "admin", "--path", "/minimal/api/rest/auto/v1/other/demo/mi/app/notes?ps=1&pg=0")
	if !strings.Contains(out, "tenancy      refuse") {
		t.Fatalf("tenancy: %s", out)
	}
	if _, _, code := cli(t, "policy", "explain", "--data-dir", dir, "--identity", "nobody", "--path", notes); code != 1 {
		t.Fatalf("unknown identity: exit %d", code)
	}
	if _, _, code := cli(t, "policy", "explain", "--data-dir", dir, "--path", notes); code != 2 {
		t.Fatalf("missing --identity: exit %d", code)
	}
}
