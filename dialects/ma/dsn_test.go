package ma_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/fault"
)

// TestURLDSN: a mysql:// (or mariadb://) URL is read as the driver's own
// form: a real server answers the connection test through it, the checks
// for org admins apply to the converted string (file options, hosts), and
// a string neither form reads is Invalid, naming both forms once.
func TestURLDSN(t *testing.T) {
	cfg, err := mysql.ParseDSN(dialecttest.DSN(t, dsnEnv))
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + cfg.DBName}
	for _, scheme := range []string{"mysql", "mariadb", "MySQL"} {
		u.Scheme = scheme
		if err := dialects.Probe(context.Background(), "ma", dialects.Config{DSN: u.String(), Schema: cfg.DBName}, dialects.Trust{}); err != nil {
			t.Fatalf("probe through %s://: %v", scheme, err)
		}
	}

	hosts, err := ma.CheckDSN("mysql://app:p%40ss%2Fw%3F@db1.internal/shop?timeout=5s")
	if err != nil || len(hosts) != 1 || hosts[0] != "db1.internal" {
		t.Fatalf("hosts %v, %v", hosts, err)
	}
	for _, dsn := range []string{
		"mysql://u:p@db1/shop?allowAllFiles=true",
		"mysql://u:p@db1/shop?serverPubKey=k",
		"mariadb://u:p@db1/shop?tls=custom",
	} {
		if fe := fault.As(dialects.CheckDSN("ma", dsn, dialects.Trust{})); fe.Code != dialects.CodeOptionRefused {
			t.Errorf("%s: %v, want %s", dsn, fe, dialects.CodeOptionRefused)
		}
	}
	l, err := dialects.ParseHostList("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	if err := dialects.CheckDSN("ma", "mysql://u:p@db1.internal:3306/shop", dialects.Trust{Hosts: l}); fault.KindOf(err) != fault.Forbidden {
		t.Errorf("a host outside --db-allow: %v", err)
	}

	for _, dsn := range []string{"mysql://?timeout=1s", "mysql://u@h:1/a/b", "mysql:///shop", "root@127.0.0.1:3306/ux"} {
		err := dialects.Probe(context.Background(), "ma", dialects.Config{DSN: dsn, Schema: "ux"}, dialects.Trust{Operator: true})
		fe := fault.As(err)
		msg := err.Error()
		if fe.Kind != fault.Invalid || !strings.Contains(msg, "mysql://user:pass@host:3306/db") || strings.Count(msg, "invalid MySQL connection string") != 1 {
			t.Errorf("%q: %v\nwant Invalid naming the forms, the prefix once", dsn, err)
		}
	}
}
