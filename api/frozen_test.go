package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/engine"
)

// viaProxy routes a test DSN of a type through a proxy of its own, which it
// returns with the rewritten DSN.
func viaProxy(t *testing.T, typ, dsn string) (string, *dialecttest.Proxy) {
	t.Helper()
	switch typ {
	case "ma":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Net != "tcp" {
			t.Skipf("the test DSN of ma connects over %s, which a TCP proxy cannot stand in for", cfg.Net)
		}
		px := dialecttest.StartProxy(t, cfg.Addr)
		cfg.Addr = px.Addr()
		return cfg.FormatDSN(), px
	default: // pg and ch: URLs
		u, err := url.Parse(dsn)
		if err != nil || u.Host == "" {
			t.Skipf("the test DSN of %s names no TCP address for a proxy", typ)
		}
		px := dialecttest.StartProxy(t, u.Host)
		u.Host = px.Addr()
		return u.String(), px
	}
}

// TestFrozenDatabaseTimesOut registers a PostgreSQL, a MariaDB and a
// ClickHouse database through proxies, reads each once, then freezes its
// proxy: the connections stay open (and new ones are accepted) but the
// server answers nothing, so its own statement timeout never comes. A read
// and an insert must each answer 504 TIMEOUT within the statement timeout
// plus dialects.TimeoutGrace (and a second of slack), over HTTP; once the
// server answers again, so does the gateway. The same holds for a
// mini-app table whose file another process holds locked.
func TestFrozenDatabaseTimesOut(t *testing.T) {
	const stmt = time.Second
	bound := stmt + dialects.TimeoutGrace + time.Second
	g := newGateway(t, engine.Config{StatementTimeout: stmt})
	proxies := map[string]*dialecttest.Proxy{}
	name := g.dialectDBsVia("frz", map[string][]string{
		"pg": {`CREATE TABLE {db}.t (id int PRIMARY KEY, v text)`},
		"ma": {`CREATE TABLE {db}.t (id int PRIMARY KEY, v text)`},
		"ch": {`CREATE TABLE {db}.t (id Int32, v String) ENGINE = MergeTree ORDER BY id`},
	}, func(typ, dsn string) string {
		routed, px := viaProxy(t, typ, dsn)
		proxies[typ] = px
		return routed
	})
	timesOut := func(t *testing.T, what, method, path string, body any) {
		t.Helper()
		start := time.Now()
		r := g.do(method, auto+path, g.admin, body)
		d := time.Since(start)
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(r.body, &env)
		t.Logf("%s: %d after %v", what, r.status, d.Round(time.Millisecond))
		if r.status != 504 || env.Error.Code != "TIMEOUT" {
			t.Errorf("%s: %d %s after %v, want 504 TIMEOUT", what, r.status, r.body, d.Round(time.Millisecond))
		}
		if d > bound {
			t.Errorf("%s answered after %v, want within %v (statement timeout %v + grace %v)",
				what, d.Round(time.Millisecond), bound, stmt, dialects.TimeoutGrace)
		}
	}
	for _, typ := range []string{"pg", "ma", "ch"} {
		t.Run(typ, func(t *testing.T) {
			read := "/" + typ + "/" + name + "/t?ps=10&pg=0"
			g.waitFor(read) // registered, opened, introspected
			expect(t, g.do("POST", auto+"/"+typ+"/"+name+"/t", g.admin, map[string]any{"id": 1, "v": "a"}), 201)
			proxies[typ].Freeze()
			timesOut(t, "a read of a frozen database", "GET", read, nil)
			timesOut(t, "an insert into a frozen database", "POST", "/"+typ+"/"+name+"/t", map[string]any{"id": 2, "v": "b"})
			proxies[typ].Thaw()
			g.waitFor(read)
		})
	}
	// A mini-app table is a local file: what hangs is another process
	// holding its write lock. SQLite's wait for the lock does not watch the
	// context; it must end within the same bound.
	t.Run("mi", func(t *testing.T) {
		notes := "/mi/app/notes"
		g.waitFor(notes + "?ps=1&pg=0")
		db, err := sql.Open("sqlite", "file:"+filepath.Join(g.dir, "mini-app", "app", "notes", "notes.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		holder, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		if _, err := holder.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		timesOut(t, "an insert into a locked table file", "POST", notes, map[string]any{"title": "locked out"})
		if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		expect(t, g.do("POST", auto+notes, g.admin, map[string]any{"title": "after the lock"}), 201)
	})
}
