package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/littlebitlabs/minimal/dialects/dialecttest"
)

// envTestPG names the PostgreSQL the store's tests run against as well.
const envTestPG = "MINIMAL_TEST_PG_DSN"

// eachBackend runs fn once on the SQLite file and once on PostgreSQL, as
// subtests "sqlite" and "postgres". The backend is chosen the way a
// process chooses it, through EnvControlDSN, so newStore, openStore and a
// bare Open all follow it. On PostgreSQL the subtest gets a schema of its
// own (dropped at the end) through search_path in the DSN; it is skipped
// when MINIMAL_TEST_PG_DSN is unset, unless MINIMAL_TEST_REQUIRE_DBS=1.
func eachBackend(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Setenv(EnvControlDSN, "")
		fn(t)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Setenv(EnvControlDSN, pgSchemaDSN(t))
		fn(t)
	})
}

// onPostgres reports whether the running subtest uses PostgreSQL.
func onPostgres() bool { return os.Getenv(EnvControlDSN) != "" }

// pgSchemaDSN creates a fresh schema in the database of MINIMAL_TEST_PG_DSN,
// drops it when the test ends, and returns a DSN that works in it.
func pgSchemaDSN(t *testing.T) string {
	t.Helper()
	base := dialecttest.DSN(t, envTestPG)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", envTestPG, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("store_test_%d_%08x", os.Getpid(), rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, base, schema)
}

// withSearchPath adds search_path=schema to a URL or key=value DSN.
func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", envTestPG, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// rawDB opens the control-plane database of the running subtest directly,
// bypassing the store: control.db in dir, or the PostgreSQL schema (with
// '?' placeholders rebound, as the store has them).
func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	var db *sql.DB
	if dsn := os.Getenv(EnvControlDSN); dsn != "" {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		db = sql.OpenDB(pgConnector{base: stdlib.GetConnector(*cfg)})
	} else {
		var err error
		if db, err = sql.Open("sqlite", filepath.Join(dir, DBFile)+"?"+dsnParams); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { db.Close() })
	return db
}
