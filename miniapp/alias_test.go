package miniapp_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/miniapp"
)

// dropIn is the drop-in mode's service over a user dir (and a project dir
// when project is set), with a table emo in the user dir.
type dropIn struct {
	t   *testing.T
	svc *miniapp.Service
	p   *auth.Principal
}

func newDropIn(t *testing.T, user, project string, seed ...string) *dropIn {
	t.Helper()
	ctx := context.Background()
	if err := mi.CreateTable(user, "emo", []byte("table: emo\nfields:\n  - name: text\n    type: string\n    required: true\n")); err != nil {
		t.Fatal(err)
	}
	if len(seed) > 0 {
		// Legacy per-table aliases, as mini-app-mcp before global aliases
		// stored them.
		db, err := sql.Open("sqlite", mi.DBPath(user, "emo"))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range seed {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	c := miniapp.DropInConfig{UserDir: user, ProjectDir: project}
	if project == "" {
		c.ProjectDir = filepath.Join(t.TempDir(), "absent")
	}
	local, err := miniapp.DropIn(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(local.Close)
	for _, dir := range local.Dirs() {
		if err := mi.CreateFiles(ctx, dir); err != nil { // as cmd/minimal mounts them
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.New(ctx, local.Store, engine.Config{Logger: log, RefreshInterval: time.Second, MissRefresh: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	t.Cleanup(func() { cancel(); eng.Close() })
	p, err := auth.NewVerifier(local.Store, local.Key).Verify(ctx, local.Token)
	if err != nil {
		t.Fatal(err)
	}
	d := &dropIn{t: t, svc: miniapp.New(eng, local.Store, local.Config), p: p}
	for _, text := range []string{"one", "two"} {
		d.ok("create", map[string]any{"table": "emo", "data": map[string]any{"text": text}})
	}
	return d
}

func (d *dropIn) call(name string, args map[string]any) miniapp.Outcome {
	d.t.Helper()
	b, _ := json.Marshal(args)
	o := d.svc.Call(context.Background(), d.p, miniapp.Lookup(name), b)
	if o.Err != nil {
		d.t.Fatalf("%s %v: JSON-RPC error %v", name, args, o.Err)
	}
	return o
}

func (d *dropIn) ok(name string, args map[string]any) string {
	d.t.Helper()
	o := d.call(name, args)
	if o.IsError {
		d.t.Fatalf("%s %v: %s", name, args, o.Text)
	}
	return o.Text
}

func (d *dropIn) fails(name string, args map[string]any, want string) {
	d.t.Helper()
	if o := d.call(name, args); !o.IsError || o.Text != want {
		d.t.Fatalf("%s %v: isError %v %q, want %q", name, args, o.IsError, o.Text, want)
	}
}

// scopes returns alias_list's name → scope.
func (d *dropIn) scopes() map[string]string {
	var l []struct{ Name, Scope string }
	if err := json.Unmarshal([]byte(d.ok("alias_list", map[string]any{})), &l); err != nil {
		d.t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range l {
		out[a.Name] = a.Scope
	}
	return out
}

var likeAll = map[string]any{"type": "like", "field": "text", "pattern": "%"}

// TestAliasDropInUserOnly: without a project dir aliases fall back to the
// user scope; an explicit project scope is not mounted.
func TestAliasDropInUserOnly(t *testing.T) {
	user := t.TempDir()
	d := newDropIn(t, user, "",
		`CREATE TABLE IF NOT EXISTS _aliases (name TEXT PRIMARY KEY, filter TEXT NOT NULL, default_limit INTEGER, description TEXT, params_schema TEXT)`,
		`INSERT INTO _aliases VALUES ('old_one', '{"type":"eq","field":"text","value":"one"}', 5, 'legacy', NULL)`)
	// The legacy alias was migrated into the user scope's global store.
	want := `[{"name":"old_one","sources":{"kind":"single","value":"emo"},"aggregator":null,"filter":"{\"type\":\"eq\",\"field\":\"text\",\"value\":\"one\"}","default_limit":5,"description":"legacy","params_schema":null,"fields":null,"order_by":null,"scope":"user"}]`
	if got := d.ok("alias_list", map[string]any{}); got != want {
		t.Fatalf("migrated alias_list:\n got %s\nwant %s", got, want)
	}
	var old []map[string]any
	if err := json.Unmarshal([]byte(d.ok("alias_run", map[string]any{"name": "old_one"})), &old); err != nil || len(old) != 1 {
		t.Fatalf("migrated alias_run: %v", old)
	}
	d.ok("alias_delete", map[string]any{"name": "old_one"})
	if got := d.ok("alias_create", map[string]any{"name": "u1", "table": "emo", "filter": likeAll}); got != `{"created":"u1"}` {
		t.Fatalf("alias_create: %s", got)
	}
	if _, err := os.Stat(filepath.Join(user, "_global.db")); err != nil {
		t.Fatalf("user alias store: %v", err)
	}
	if s := d.scopes(); len(s) != 1 || s["u1"] != "user" {
		t.Fatalf("alias_list scopes %v", s)
	}
	d.fails("alias_create", map[string]any{"name": "p1", "table": "emo", "filter": likeAll, "scope": "project"},
		"alias_create: requested scope Project is not mounted on this server. Either omit the `scope` argument (the server will auto-select a mounted scope) or configure the corresponding directory (MINI_APP_PROJECT_DIR / MINI_APP_USER_DIR).")
	d.argsErr("alias_create", map[string]any{"name": "p1", "table": "emo", "filter": likeAll, "scope": "global"},
		"invalid params: scope: unknown variant `global`, expected `project` or `user`")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(d.ok("alias_run", map[string]any{"name": "u1"})), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("alias_run: %v", rows)
	}
	if got := d.ok("alias_delete", map[string]any{"name": "u1"}); got != `{"deleted":"u1"}` {
		t.Fatalf("alias_delete: %s", got)
	}
	d.fails("alias_delete", map[string]any{"name": "u1"}, "alias not found: u1")
}

// TestAliasDropInScopes: with a project dir, project is the default and
// wins over user on a shared name; delete removes project first.
func TestAliasDropInScopes(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	d := newDropIn(t, user, project)
	one := map[string]any{"type": "eq", "field": "text", "value": "one"}
	d.ok("alias_create", map[string]any{"name": "dup", "table": "emo", "filter": one})
	d.ok("alias_create", map[string]any{"name": "dup", "table": "emo", "filter": likeAll, "scope": "user"})
	d.fails("alias_create", map[string]any{"name": "dup", "table": "emo", "filter": likeAll, "scope": "project"}, "alias already exists: dup")
	for _, dir := range []string{user, project} {
		if _, err := os.Stat(filepath.Join(dir, "_global.db")); err != nil {
			t.Fatalf("alias store in %s: %v", dir, err)
		}
	}
	if s := d.scopes(); len(s) != 1 || s["dup"] != "project" {
		t.Fatalf("alias_list scopes %v", s)
	}
	count := func() int {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(d.ok("alias_run", map[string]any{"name": "dup"})), &rows); err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	if n := count(); n != 1 {
		t.Fatalf("project alias ran %d rows, want 1", n)
	}
	d.ok("alias_delete", map[string]any{"name": "dup"})
	if s := d.scopes(); s["dup"] != "user" {
		t.Fatalf("after delete: %v", s)
	}
	if n := count(); n != 2 {
		t.Fatalf("user alias ran %d rows, want 2", n)
	}
	d.ok("alias_delete", map[string]any{"name": "dup"})
	d.fails("alias_run", map[string]any{"name": "dup"}, "alias not found: dup")
	// A template that does not parse is stored, and refused when run.
	d.ok("alias_create", map[string]any{"name": "bad", "table": "emo", "filter_template": "{{ x ", "params_schema": []any{"x"}})
	o := d.call("alias_run", map[string]any{"name": "bad", "params": map[string]any{"x": "nope"}})
	if !o.IsError || !strings.HasPrefix(o.Text, "alias template render error: ") {
		t.Fatalf("bad template: %v %q", o.IsError, o.Text)
	}
	// A template rendering to something that is not a filter.
	d.ok("alias_create", map[string]any{"name": "junk", "table": "emo", "filter_template": "{{ x }}", "params_schema": []any{"x"}})
	o = d.call("alias_run", map[string]any{"name": "junk", "params": map[string]any{"x": "nope"}})
	if !o.IsError || !strings.HasPrefix(o.Text, "schema parse error: rendered filter parse error: ") {
		t.Fatalf("junk render: %v %q", o.IsError, o.Text)
	}
}
