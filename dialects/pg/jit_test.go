package pg_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
)

// TestJITOff: the gateway's connections run with PostgreSQL's JIT off (a
// backend that has loaded the JIT library makes every parallel worker of
// its later statements load it again), unless the DSN sets jit itself.
func TestJITOff(t *testing.T) {
	db := newTestDB(t)
	setting := func(src dialects.Source) string {
		t.Helper()
		rows, err := src.(dialects.Runner).RunRead(context.Background(), dialects.Stmt{SQL: "SELECT current_setting('jit')"})
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		return v[0].(string)
	}
	if got := setting(db.open(t, dialects.Config{})); got != "off" {
		t.Errorf("jit on a gateway connection = %q, want off", got)
	}
	dsn := db.dsn + " jit=on" // a keyword/value DSN
	if strings.Contains(db.dsn, "://") {
		u, err := url.Parse(db.dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("jit", "on")
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	if got := setting(db.open(t, dialects.Config{DSN: dsn})); got != "on" {
		t.Errorf("jit with a DSN that sets jit=on = %q, want on (the DSN's choice kept)", got)
	}
}
