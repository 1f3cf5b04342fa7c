package ma_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
)

// confDDL creates the conformance fixtures (see the dialecttest package
// documentation) with MariaDB's own types. JSON is MariaDB's alias of
// LONGTEXT with a json_valid check; uuid needs MariaDB 10.7. Text compares
// with utf8mb4_bin, case-sensitive as PostgreSQL's text: the seed holds
// names that differ only in case, under a unique key.
func confDDL(uuid bool) []string {
	u := ""
	if uuid {
		u = "u uuid,"
	}
	return []string{
		`CREATE TABLE conf_items (
			id     bigint AUTO_INCREMENT PRIMARY KEY,
			name   varchar(100) NOT NULL UNIQUE,
			qty    bigint,
			ratio  double,
			active boolean,
			note   text
		) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		`CREATE TABLE conf_writes (
			id   bigint AUTO_INCREMENT PRIMARY KEY,
			name varchar(100) NOT NULL UNIQUE,
			qty  bigint,
			n    bigint DEFAULT 7
		) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		`CREATE TABLE conf_types (
			name  varchar(100) NOT NULL,
			i64   bigint,
			` + "`dec`" + ` decimal(20,6),
			f64   double,
			b     boolean,
			s     longtext,
			d     date,
			ts    datetime(6),
			tz    timestamp(6) NULL,
			j     json,
			` + u + `
			` + "`by`" + ` longblob
		) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
		`CREATE VIEW conf_slow AS SELECT SLEEP(3) AS x`,
	}
}

var confTables = []string{"conf_slow", "conf_items", "conf_writes", "conf_types"}

// Server error numbers of CREATE DATABASE without the privilege.
const (
	erDBAccessDenied = 1044
	erAccessDenied   = 1045
	erSpecificAccess = 1227
)

// TestConformance runs the shared dialect suite on a fresh database of the
// server in MINIMAL_TEST_MA_DSN, dropped when the test ends. A test user
// that may not create databases (the services script grants ALL on its one
// database only) runs it in the DSN's database instead, which must then
// hold nothing else; a named lock keeps two such runs apart.
func TestConformance(t *testing.T) {
	dsn := dialecttest.DSN(t, dsnEnv)
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	cfg.ParseTime = false
	cfg.Params = nil
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(connector)
	t.Cleanup(func() { _ = pool.Close() })
	admin, err := pool.Conn(ctx) // one session: USE and GET_LOCK hold for it
	if err != nil {
		t.Fatalf("connect %s: %v", dsnEnv, err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	exec := func(text string) {
		t.Helper()
		if _, err := admin.ExecContext(ctx, text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	var version string
	if err := admin.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}

	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "minimal_conf_" + hex.EncodeToString(b[:])
	_, err = admin.ExecContext(ctx, "CREATE DATABASE `"+schema+"` CHARACTER SET utf8mb4")
	var me *mysql.MySQLError
	switch {
	case err == nil:
		t.Cleanup(func() {
			if _, err := admin.ExecContext(context.Background(), "DROP DATABASE `"+schema+"`"); err != nil {
				t.Errorf("drop database: %v", err)
			}
		})
	case errors.As(err, &me) && (me.Number == erDBAccessDenied || me.Number == erAccessDenied || me.Number == erSpecificAccess):
		schema = cfg.DBName
		if schema == "" {
			t.Fatalf("%s names no database, and its user may not create one: %v", dsnEnv, err)
		}
		t.Logf("the test user may not create databases (%v); running in %s, which must hold nothing else", err, schema)
		var got sql.NullInt64
		if err := admin.QueryRowContext(ctx, "SELECT GET_LOCK(?, 300)", "minimal_conformance_"+schema).Scan(&got); err != nil || got.Int64 != 1 {
			t.Fatalf("lock %s: %v %v", schema, got, err)
		}
		drop := func() {
			for _, name := range confTables {
				kind := "TABLE"
				if name == "conf_slow" {
					kind = "VIEW"
				}
				if _, err := admin.ExecContext(context.Background(), "DROP "+kind+" IF EXISTS `"+schema+"`.`"+name+"`"); err != nil {
					t.Errorf("drop %s: %v", name, err)
				}
			}
		}
		drop()
		t.Cleanup(func() {
			drop()
			_, _ = admin.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", "minimal_conformance_"+schema)
		})
	default:
		t.Fatalf("create database: %v", err)
	}
	exec("USE `" + schema + "`")
	mariaDB := strings.Contains(strings.ToLower(version), "mariadb")
	var major, minor int
	if parts := strings.SplitN(strings.TrimPrefix(version, "5.5.5-"), ".", 3); len(parts) >= 2 {
		major, minor = atoi(parts[0]), atoi(parts[1])
	}
	uuid := mariaDB && (major > 10 || major == 10 && minor >= 7)
	for _, ddl := range confDDL(uuid) {
		exec(ddl)
	}

	h := dialecttest.Harness{
		Type:      "ma",
		Config:    dialects.Config{DSN: dsn, Schema: schema},
		NullOrder: dialecttest.NullsSmallest,
		// maxParams: larger inserts are split, in one transaction.
		MaxInsertValues: 65535,
		Lacks: dialecttest.Lacks{
			Array: "MariaDB and MySQL have no array type",
		},
	}
	if !uuid {
		h.Lacks.UUID = "MySQL and MariaDB before 10.7 have no uuid type"
	}
	if cfg.Net == "tcp" {
		h.Addr = cfg.Addr
		h.ViaProxy = func(addr string) string {
			c, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			c.Addr = addr
			return c.FormatDSN()
		}
	} else {
		h.Lacks.Outage = "the test DSN connects over " + cfg.Net + ", which a TCP proxy cannot stand in for"
	}
	dialecttest.RunConformance(t, h)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
