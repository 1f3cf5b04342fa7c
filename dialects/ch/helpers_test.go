package ch_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"slices"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

const dsnEnv = "MINIMAL_TEST_CH_DSN"

// testDB is one uniquely named database on the test server, dropped when
// the test ends, and an admin connection to it.
type testDB struct {
	dsn     string
	addr    string
	name    string
	admin   driver.Conn
	version *driver.ServerVersion
}

func newTestDB(t testing.TB, prefix string) *testDB {
	t.Helper()
	dsn := dialecttest.DSN(t, dsnEnv)
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	admin, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	v, err := admin.ServerVersion()
	if err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := &testDB{dsn: dsn, addr: opts.Addr[0], name: prefix + hex.EncodeToString(b[:]), admin: admin, version: v}
	db.exec(t, "CREATE DATABASE "+db.name)
	t.Cleanup(func() {
		// A statement cut off from its client (the outage tests) may still
		// run on the server; it would hold the drop until it finishes.
		_ = admin.Exec(context.Background(), "KILL QUERY WHERE query_id LIKE 'minimal-%' AND query LIKE ? SYNC", "%"+db.name+"%")
		if err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db.name); err != nil {
			t.Errorf("drop database: %v", err)
		}
		_ = admin.Close()
	})
	return db
}

// atLeast reports whether the server is at least major.minor.
func (db *testDB) atLeast(major, minor uint64) bool {
	v := db.version.Version
	return v.Major > major || v.Major == major && v.Minor >= minor
}

func (db *testDB) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := db.admin.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (db *testDB) count(t testing.TB, table string) uint64 {
	t.Helper()
	var n uint64
	if err := db.admin.QueryRow(context.Background(), "SELECT count() FROM "+db.name+"."+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pendingMutations counts the mutations of a table not yet done.
func (db *testDB) pendingMutations(t testing.TB, table string) uint64 {
	t.Helper()
	var n uint64
	err := db.admin.QueryRow(context.Background(),
		"SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0", db.name, table).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// withAddr is the DSN pointed at another host:port.
func (db *testDB) withAddr(t testing.TB, addr string) string {
	t.Helper()
	u, err := url.Parse(db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

func (db *testDB) open(t testing.TB, cfg dialects.Config) dialects.Source {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = db.dsn
	}
	cfg.Schema = db.name
	src, err := dialects.Open(context.Background(), "ch", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

func collect(t testing.TB, rows dialects.Rows, err error) [][]any {
	t.Helper()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatalf("Values: %v", err)
		}
		out = append(out, slices.Clone(v))
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return out
}

// read runs a read plan and returns a copy of every row.
func read(t testing.TB, src dialects.Source, p *query.Plan) [][]any {
	t.Helper()
	rows, err := src.Read(context.Background(), p)
	return collect(t, rows, err)
}

// readAll runs a read to its end and returns its first error.
func readAll(src dialects.Source, p *query.Plan) error {
	rows, err := src.Read(context.Background(), p)
	if err != nil {
		return err
	}
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			_ = rows.Close()
			return err
		}
	}
	return rows.Close()
}

func wantKind(t testing.TB, err error, kind fault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if got := fault.KindOf(err); got != kind {
		t.Fatalf("kind %s, want %s: %v", got, kind, err)
	}
}

func cond(col string, op query.Op, args ...any) *query.Cond {
	return &query.Cond{Column: col, Op: op, Args: args}
}
