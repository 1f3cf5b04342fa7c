package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBCommandsAreOperator: `minimal db add` and `db test` run with the
// operator's trust (options naming files of the host are the operator's
// to use, and its connection test keeps the dialect's message), and a bad
// --db-allow, from the flag or the environment, stops `serve` at once.
func TestDBCommandsAreOperator(t *testing.T) {
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" || !strings.Contains(dsn, "sslmode=disable") {
		t.Skip("MINIMAL_TEST_PG_DSN is unset or does not disable TLS")
	}
	dir := t.TempDir()
	s := startServer(t, dir)
	defer s.stop(t)
	key := filepath.Join(t.TempDir(), "client.key")
	withFiles := dsn + "&sslkey=" + key + "&sslcert=" + key + ".crt"
	if _, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", "public", "--dsn", withFiles); code != 0 {
		t.Fatalf("db add with sslkey: %d %s", code, errOut)
	}
	if out, errOut, code := cli(t, "db", "test", "--data-dir", dir, "--type", "pg", "--schema", "public"); code != 0 || !strings.Contains(out, "ok: pg/public") {
		t.Fatalf("db test: %d %s %s", code, out, errOut)
	}
	_, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", "dead", "--dsn", "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if code == 0 || !strings.Contains(errOut, "failed to connect: database unavailable") {
		t.Fatalf("db add of a dead server: %d %s", code, errOut)
	}

	for _, run := range []func() (string, string, int){
		func() (string, string, int) {
			return cli(t, "serve", "--data-dir", t.TempDir(), "--db-allow", "10.0.0.0/33")
		},
		func() (string, string, int) {
			return cliEnv(t, []string{"MINIMAL_DB_ALLOW=db.internal,user@host"}, "serve", "--data-dir", t.TempDir())
		},
	} {
		if _, errOut, code := run(); code == 0 || !strings.Contains(errOut, "--db-allow") {
			t.Fatalf("serve with a bad --db-allow: %d %s", code, errOut)
		}
	}
}
