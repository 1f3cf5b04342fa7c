package dialects_test

import (
	"context"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

func TestRedact(t *testing.T) {
	const pw = "Sup3r-Secret"
	cases := []struct{ dsn, msg string }{
		{"postgres://app:" + pw + "@db:5432/hr", "failed for postgres://app:" + pw + "@db:5432/hr"},
		{"postgres://app:" + pw + "@db:5432/hr", "password " + pw + " rejected"},
		{"postgres://app:Sup3r%2FSecret@db/hr", "password Sup3r/Secret rejected"},
		{"host=db user=app password=" + pw + " dbname=hr", "bad password=" + pw},
		{"sqlserver://app@db?database=hr&password=" + pw, "login " + pw},
		{"server=db;user id=app;password={" + pw + "};database=hr", "login " + pw},
		{"app:" + pw + "@tcp(db:3306)/hr", "Access denied for " + pw},
		{"/srv/minimal/mini-app/secret-dir", "mi: /srv/minimal/mini-app/secret-dir is not a directory"},
	}
	for _, tc := range cases {
		got := dialects.Redact(tc.msg, tc.dsn)
		if strings.Contains(got, pw) || strings.Contains(got, "Sup3r/Secret") || strings.Contains(got, tc.dsn) {
			t.Errorf("Redact(%q, %q) = %q", tc.msg, tc.dsn, got)
		}
		if !strings.Contains(got, "***") {
			t.Errorf("Redact(%q, %q) = %q: nothing replaced", tc.msg, tc.dsn, got)
		}
	}
	// Short passwords are not hunted in the text (they would garble it).
	if got := dialects.Redact("an error", "postgres://u:e@h/db"); got != "an error" {
		t.Errorf("short password garbled the message: %q", got)
	}
}

func TestProbeUnknownType(t *testing.T) {
	err := dialects.Probe(context.Background(), "zz", dialects.Config{DSN: "x", Schema: "s"}, dialects.Trust{Operator: true})
	if fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, `"zz"`) {
		t.Fatalf("err = %v", err)
	}
}
