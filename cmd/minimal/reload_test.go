package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDBReload runs a server whose catalog is trusted for an hour
// (--refresh-interval 1h): a column added in PostgreSQL shows in reads
// within 2 s of `minimal db reload`, and not before. `db add` and `db
// test` of a schema without tables warn on stderr and still succeed; `db
// reload` of an unregistered database fails; a refresh interval that is
// not positive is refused by serve.
func TestDBReload(t *testing.T) {
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("MINIMAL_TEST_REQUIRE_DBS") == "1" {
			t.Fatal("MINIMAL_TEST_PG_DSN is unset and MINIMAL_TEST_REQUIRE_DBS=1")
		}
		t.Skip("MINIMAL_TEST_PG_DSN is unset")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema, empty := fmt.Sprintf("rl_%d", rand.Uint32()), fmt.Sprintf("rle_%d", rand.Uint32())
	defer func() {
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE; DROP SCHEMA "+empty+" CASCADE")
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; CREATE SCHEMA "+empty+"; CREATE TABLE "+schema+".t (id serial PRIMARY KEY, v text); INSERT INTO "+schema+".t (v) VALUES ('a')"); err != nil {
		t.Fatal(err)
	}

	if _, errOut, code := cli(t, "serve", "--data-dir", t.TempDir(), "--refresh-interval", "0s"); code == 0 || !strings.Contains(errOut, "--refresh-interval") {
		t.Fatalf("serve --refresh-interval 0s: %d %s", code, errOut)
	}
	dir := t.TempDir()
	s := startServer(t, dir, "--refresh-interval", "1h")
	defer s.stop(t)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	if _, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--type", "pg", "--schema", schema, "--dsn", dsn); code != 0 || strings.Contains(errOut, "warning") {
		t.Fatalf("db add: %d %s", code, errOut)
	}
	for _, args := range [][]string{
		{"db", "add", "--data-dir", dir, "--type", "pg", "--schema", empty, "--dsn", dsn},
		{"db", "test", "--data-dir", dir, "--type", "pg", "--schema", empty},
	} {
		if _, errOut, code := cli(t, args...); code != 0 || !strings.Contains(errOut, "warning: pg/"+empty+": the schema holds no table") {
			t.Fatalf("%v: %d %s", args[:2], code, errOut)
		}
	}
	url := "http://" + s.addr + "/minimal/api/rest/auto/v1/demo/demo/pg/" + schema + "/t?ps=10&pg=0"
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, body := get(t, url, admin)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not served after db add: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := conn.Exec(ctx, "ALTER TABLE "+schema+".t ADD COLUMN w text DEFAULT 'new'"); err != nil {
		t.Fatal(err)
	}
	if _, _, body := get(t, url, admin); strings.Contains(body, `"w"`) {
		t.Fatalf("the new column shows before db reload, within the hour: %s", body)
	}
	if out, errOut, code := cli(t, "db", "reload", "--data-dir", dir, "--type", "pg", "--schema", schema); code != 0 || !strings.Contains(out, "again") {
		t.Fatalf("db reload: %d %s %s", code, out, errOut)
	}
	reloaded := time.Now()
	for {
		_, _, body := get(t, url, admin)
		if strings.Contains(body, `"w":"new"`) {
			break
		}
		if time.Since(reloaded) > 2*time.Second {
			t.Fatalf("the new column is not served 2 s after db reload: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, errOut, code := cli(t, "db", "reload", "--data-dir", dir, "--type", "pg", "--schema", "nosuch"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Fatalf("db reload of an unregistered database: %d %s", code, errOut)
	}
}
