package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/store"
)

// schemaFixture is the bootstrap gateway, an admin session and the scope
// root of the bootstrap's mi database "app" (scope project).
func schemaFixture(t *testing.T) (*gateway, string, string) {
	g := newGateway(t, time.Hour)
	return g, g.start(g.agent), filepath.Join(g.dir, "mini-app", "app")
}

func field(name, typ string, required bool) map[string]any {
	return map[string]any{"name": name, "type": typ, "required": required}
}

// must calls a tool and fails on an error answer.
func (g *gateway) must(token, sid, name string, args map[string]any) string {
	g.t.Helper()
	text, isErr := g.miniToolAs(token, sid, name, args)
	if isErr {
		g.t.Fatalf("%s %v: %s", name, args, text)
	}
	return text
}

// refused calls a tool and wants exactly the error text.
func (g *gateway) refused(token, sid, name string, args map[string]any, want string) {
	g.t.Helper()
	text, isErr := g.miniToolAs(token, sid, name, args)
	if !isErr || text != want {
		g.t.Fatalf("%s %v: isError %v %q, want %q", name, args, isErr, text, want)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// listData lists a table and returns the rows' data objects as JSON, sorted.
func (g *gateway) listData(token, sid, table string) []string {
	g.t.Helper()
	var rows []struct{ Data map[string]any }
	if err := json.Unmarshal([]byte(g.must(token, sid, "list", map[string]any{"table": table})), &rows); err != nil {
		g.t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, jsonText(r.Data))
	}
	slices.Sort(out)
	return out
}

func backupNames(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "_backup"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestSchemaCreateIsServed(t *testing.T) {
	g, sid, root := schemaFixture(t)
	yamlPath := filepath.Join(root, "tasks", "schema.yaml")
	args := map[string]any{"table": "tasks", "scope": "project", "title": "Tasks",
		"fields": []any{field("title", "string", true), field("done", "boolean", false)}}

	// dry_run writes nothing.
	dry := map[string]any{"table": "tasks", "scope": "project", "fields": []any{}, "dry_run": true}
	if got, want := g.must(g.agent, sid, "schema_create", dry), `{"affects":{"already_exists":false,"would_create":"`+yamlPath+`"},"dry_run":true}`; got != want {
		t.Fatalf("dry_run: %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "tasks")); !os.IsNotExist(err) {
		t.Fatalf("dry_run created the table dir: %v", err)
	}

	if got, want := g.must(g.agent, sid, "schema_create", args), `{"created":"tasks","schema_path":"`+yamlPath+`","scope":"project"}`; got != want {
		t.Fatalf("schema_create: %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "tasks", "tasks.db")); err != nil {
		t.Fatal(err)
	}
	// Served at once through the mini-app tools…
	g.must(g.agent, sid, "create", map[string]any{"table": "tasks", "data": map[string]any{"title": "first", "done": false}})
	if got := g.listData(g.agent, sid, "tasks"); !slices.Equal(got, []string{`{"done":false,"title":"first"}`}) {
		t.Fatalf("list: %v", got)
	}
	if info := g.must(g.agent, sid, "info", map[string]any{"table": "tasks"}); !strings.Contains(info, `"title": "Tasks"`) {
		t.Fatalf("info: %s", info)
	}
	// … and the REST Auto API.
	var r reply
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r = g.restDo("GET", "/minimal/api/rest/auto/v1/demo/demo/mi/app/tasks?ps=10&pg=0", g.admin, nil)
		if r.status == 200 || time.Now().After(deadline) {
			break
		}
	}
	if r.status != 200 || !strings.Contains(string(r.raw), `"first"`) {
		t.Fatalf("REST: %d %s", r.status, r.raw)
	}

	g.refused(g.agent, sid, "schema_create", args, "schema already exists: tasks")
	dry["dry_run"] = true
	if got, want := g.must(g.agent, sid, "schema_create", dry), `{"affects":{"already_exists":true,"would_create":"`+yamlPath+`"},"dry_run":true}`; got != want {
		t.Fatalf("dry_run on an existing table: %s, want %s", got, want)
	}
	// mini-app-mcp's validate_table_name texts.
	for name, why := range map[string]string{
		".hidden": "table name must not start with '.'",
		"a/b":     "table name contains invalid character '/'; allowed: [A-Za-z0-9_-]",
		"":        "table name must not be empty",
		"sp ace":  "table name contains invalid character ' '; allowed: [A-Za-z0-9_-]",
	} {
		g.refused(g.agent, sid, "schema_create", map[string]any{"table": name, "scope": "project", "fields": []any{}},
			"validation error on field 'table': "+why)
	}
	g.refused(g.agent, sid, "schema_create", map[string]any{"table": "bad", "scope": "project", "fields": []any{field("n", "int", false)}},
		"validation error on field 'fields[n].type': unknown type 'int': expected one of string, number, boolean, array, object")
	g.refused(g.agent, sid, "schema_create", map[string]any{"table": "bad", "scope": "team", "fields": []any{}},
		"validation error on field 'scope': unrecognised scope 'team': expected 'project' or 'user'")
	g.refused(g.agent, sid, "schema_create", map[string]any{"table": "bad", "scope": "user", "fields": []any{}},
		"config error: scope 'user' is not mounted on this server (the gateway serves mi databases as scope project)")
	if _, err := os.Stat(filepath.Join(root, "bad")); !os.IsNotExist(err) {
		t.Fatalf("refused create left %v", err)
	}
}

func TestSchemaUpdateBacksUp(t *testing.T) {
	t.Setenv("MINI_APP_BACKUP_RETENTION", "2")
	g, sid, root := schemaFixture(t)
	yamlPath := filepath.Join(root, "tasks", "schema.yaml")
	g.must(g.agent, sid, "schema_create", map[string]any{"table": "tasks", "scope": "project",
		"fields": []any{field("title", "string", true), field("done", "boolean", false), field("old", "string", false)}})
	g.must(g.agent, sid, "create", map[string]any{"table": "tasks", "data": map[string]any{"title": "t1", "done": true}})
	before, err := os.ReadFile(yamlPath)
	if err != nil {
		t.Fatal(err)
	}
	upd := map[string]any{"table": "tasks", "scope": "project",
		"fields": []any{field("title", "string", true), field("done", "string", false), field("prio", "number", false)}}

	upd["dry_run"] = true
	if got, want := g.must(g.agent, sid, "schema_update", upd), `{"affects":{"fields_added":["prio"],"fields_removed":["old"],"fields_type_changed":["done"],"rows_unchanged":1},"dry_run":true}`; got != want {
		t.Fatalf("dry_run: %s, want %s", got, want)
	}
	if n := backupNames(t, root); len(n) != 0 {
		t.Fatalf("dry_run wrote backups %v", n)
	}
	delete(upd, "dry_run")
	want := `{"fields_added":["prio"],"fields_removed":["old"],"fields_type_changed":["done"],"schema_path":"` + yamlPath + `","scope":"project","updated":"tasks"}`
	if got := g.must(g.agent, sid, "schema_update", upd); got != want {
		t.Fatalf("schema_update: %s, want %s", got, want)
	}
	names := backupNames(t, root)
	if len(names) != 2 || !strings.HasPrefix(names[0], "tasks.") || !strings.HasSuffix(names[0], ".db") ||
		names[1] != strings.TrimSuffix(names[0], ".db")+".yaml" {
		t.Fatalf("backups: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "_backup", names[1])); string(b) != string(before) {
		t.Fatalf("yaml backup %q, want %q", b, before)
	}
	if n := countRows(t, filepath.Join(root, "_backup", names[0])); n != 1 {
		t.Fatalf("db backup has %d rows", n)
	}
	// The new definition is served at once: prio is a field now.
	g.must(g.agent, sid, "create", map[string]any{"table": "tasks", "data": map[string]any{"title": "t2", "done": "yes", "prio": 3}})
	if got := g.listData(g.agent, sid, "tasks"); !slices.Equal(got, []string{`{"done":"yes","prio":3,"title":"t2"}`, `{"done":true,"title":"t1"}`}) {
		t.Fatalf("list after update: %v", got)
	}

	// Retention: two more updates keep the newest two pairs.
	for i := 0; i < 2; i++ {
		g.must(g.agent, sid, "schema_update", upd)
	}
	after := backupNames(t, root)
	if len(after) != 4 || slices.Contains(after, names[0]) || slices.Contains(after, names[1]) {
		t.Fatalf("retention 2 kept %v (first pair %v)", after, names)
	}
	g.refused(g.agent, sid, "schema_update", map[string]any{"table": "nope", "scope": "project", "fields": []any{}}, "table not found: nope")
}

func TestSchemaDeleteKeepsTheDB(t *testing.T) {
	g, sid, root := schemaFixture(t)
	yamlPath, dbPath := filepath.Join(root, "gone", "schema.yaml"), filepath.Join(root, "gone", "gone.db")
	g.must(g.agent, sid, "schema_create", map[string]any{"table": "gone", "scope": "project", "fields": []any{field("x", "string", false)}})
	for _, x := range []string{"a", "b"} {
		g.must(g.agent, sid, "create", map[string]any{"table": "gone", "data": map[string]any{"x": x}})
	}
	if got, want := g.must(g.agent, sid, "schema_delete", map[string]any{"table": "gone", "scope": "project", "dry_run": true}),
		`{"affects":{"db_file_retained":"`+dbPath+`","rows_orphaned":2,"would_remove_yaml":"`+yamlPath+`"},"dry_run":true}`; got != want {
		t.Fatalf("dry_run: %s, want %s", got, want)
	}
	if _, err := os.Stat(yamlPath); err != nil || len(backupNames(t, root)) != 0 {
		t.Fatalf("dry_run changed files: %v %v", err, backupNames(t, root))
	}
	if got, want := g.must(g.agent, sid, "schema_delete", map[string]any{"table": "gone", "scope": "project"}),
		`{"db_file_retained":"`+dbPath+`","deleted":"gone","schema_path_removed":"`+yamlPath+`","scope":"project"}`; got != want {
		t.Fatalf("schema_delete: %s, want %s", got, want)
	}
	if _, err := os.Stat(yamlPath); !os.IsNotExist(err) {
		t.Fatalf("yaml still there: %v", err)
	}
	if n := countRows(t, dbPath); n != 2 {
		t.Fatalf("db keeps %d rows", n)
	}
	if names := backupNames(t, root); len(names) != 2 {
		t.Fatalf("backups %v", names)
	}
	g.refused(g.agent, sid, "list", map[string]any{"table": "gone"}, "table not found: gone")
	g.refused(g.agent, sid, "schema_delete", map[string]any{"table": "gone", "scope": "project"}, "table not found: gone")

	// No database file: BACKUP_ERROR, the yaml stays.
	g.must(g.agent, sid, "schema_create", map[string]any{"table": "nodb", "scope": "project", "fields": []any{}})
	nodb := filepath.Join(root, "nodb", "nodb.db")
	if err := os.Remove(nodb); err != nil {
		t.Fatal(err)
	}
	g.refused(g.agent, sid, "schema_delete", map[string]any{"table": "nodb", "scope": "project"},
		"backup error: database file of table 'nodb' not found: "+nodb)
	if _, err := os.Stat(filepath.Join(root, "nodb", "schema.yaml")); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaBatch(t *testing.T) {
	g, sid, root := schemaFixture(t)
	yamlPath := filepath.Join(root, "edges", "schema.yaml")
	g.must(g.agent, sid, "schema_create", map[string]any{"table": "edges", "scope": "project",
		"fields": []any{field("src", "string", true), field("dst", "string", true)}})
	for _, d := range []string{"b", "c"} {
		g.must(g.agent, sid, "create", map[string]any{"table": "edges", "data": map[string]any{"src": "a", "dst": d}})
	}
	g.must(g.agent, sid, "create", map[string]any{"table": "edges", "data": map[string]any{"src": "z", "dst": "q"}})
	original := []string{`{"dst":"b","src":"a"}`, `{"dst":"c","src":"a"}`, `{"dst":"q","src":"z"}`}
	yamlBefore, _ := os.ReadFile(yamlPath)
	replace := map[string]any{"op": "replace", "table": "edges", "match": map[string]any{"src": "a"},
		"items": []any{map[string]any{"src": "a", "dst": "x"}, map[string]any{"src": "a", "dst": "y"}}}
	update := map[string]any{"op": "schema_update", "table": "edges", "scope": "project",
		"fields": []any{field("src", "string", true), field("dst", "string", true), field("w", "number", false)}}
	unchanged := func(what string) {
		t.Helper()
		if got := g.listData(g.agent, sid, "edges"); !slices.Equal(got, original) {
			t.Fatalf("%s: rows %v", what, got)
		}
		if b, _ := os.ReadFile(yamlPath); string(b) != string(yamlBefore) {
			t.Fatalf("%s: yaml rewritten to %s", what, b)
		}
	}

	// A failing op midway rolls everything back: no rows changed, no yaml.
	text, isErr := g.miniTool(sid, "schema_batch", map[string]any{"ops": []any{update, replace,
		map[string]any{"op": "query", "table": "edges", "sql": "INSERT INTO nosuch VALUES (?)", "params": []any{1}}}})
	if !isErr || !strings.HasPrefix(text, "batch aborted at op #2: ") || !strings.Contains(text, "no such table: nosuch") {
		t.Fatalf("failing batch: %v %s", isErr, text)
	}
	unchanged("aborted batch")
	g.refused(g.agent, sid, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "replace", "table": "edges",
		"match": map[string]any{"src": "a"}, "items": []any{map[string]any{"src": 1, "dst": "x"}}}}},
		"batch aborted at op #0: items[0]: validation error on field 'src': expected type 'string', got 'number'")
	unchanged("invalid item")

	// dry_run writes nothing.
	backups := backupNames(t, root)
	if got, want := g.must(g.agent, sid, "schema_batch", map[string]any{"dry_run": true, "ops": []any{update, replace,
		map[string]any{"op": "query", "table": "edges", "sql": "DELETE FROM rows"}}}),
		`{"affects":[{"fields_added":["w"],"fields_removed":[],"op":"schema_update","rows_unchanged":3,"table":"edges"},`+
			`{"items_count":2,"match_keys":1,"note":"dry_run: DELETE/INSERT not executed","op":"replace","table":"edges","would_delete_estimate":null,"would_insert":2},`+
			`{"note":"dry_run: SQL not executed","op":"query","rows_affected":null,"sql":"DELETE FROM rows"}],`+
			`"backups_written":[],"committed":false,"dry_run":true,"ops_executed":3,"registry_rebuilt":false,"yaml_writes":[]}`; got != want {
		t.Fatalf("dry_run:\n%s\nwant\n%s", got, want)
	}
	unchanged("dry_run")
	if got := backupNames(t, root); !slices.Equal(got, backups) {
		t.Fatalf("dry_run wrote backups %v", got)
	}

	// Committed: replace swaps the rows, the query runs with bound params,
	// the yaml is written last.
	got := g.must(g.agent, sid, "schema_batch", map[string]any{"ops": []any{update, replace,
		map[string]any{"op": "query", "table": "edges", "sql": "DELETE FROM rows WHERE json_extract(data, '$.src') = ?", "params": []any{"z"}}}})
	want := `{"affects":{"deleted":2,"inserted":2},"backups_written":["` + filepath.Join(root, "_backup") + `"],"committed":true,"ops_executed":3,"registry_rebuilt":true,"yaml_writes":["` + yamlPath + `"]}`
	if got != want {
		t.Fatalf("batch: %s, want %s", got, want)
	}
	if rows := g.listData(g.agent, sid, "edges"); !slices.Equal(rows, []string{`{"dst":"x","src":"a"}`, `{"dst":"y","src":"a"}`}) {
		t.Fatalf("rows after batch: %v", rows)
	}
	g.must(g.agent, sid, "create", map[string]any{"table": "edges", "data": map[string]any{"src": "n", "dst": "m", "w": 2}})

	// A batch may create the table it fills.
	freshYAML := filepath.Join(root, "fresh", "schema.yaml")
	got = g.must(g.agent, sid, "schema_batch", map[string]any{"ops": []any{
		map[string]any{"op": "schema_create", "table": "fresh", "scope": "project", "fields": []any{field("k", "string", true)}},
		map[string]any{"op": "replace", "table": "fresh", "match": map[string]any{"k": "v"}, "items": []any{map[string]any{"k": "v"}}}}})
	if want := `{"affects":{"deleted":0,"inserted":1},"backups_written":[],"committed":true,"ops_executed":2,"registry_rebuilt":true,"yaml_writes":["` + freshYAML + `"]}`; got != want {
		t.Fatalf("create+replace: %s, want %s", got, want)
	}
	if rows := g.listData(g.agent, sid, "fresh"); !slices.Equal(rows, []string{`{"k":"v"}`}) {
		t.Fatalf("fresh rows: %v", rows)
	}
	// A failing batch that would create a table leaves nothing behind.
	text, isErr = g.miniTool(sid, "schema_batch", map[string]any{"ops": []any{
		map[string]any{"op": "schema_create", "table": "never", "scope": "project", "fields": []any{}},
		map[string]any{"op": "query", "table": "never", "sql": "INSERT INTO nosuch VALUES (1)"}}})
	if !isErr || !strings.HasPrefix(text, "batch aborted at op #1: ") {
		t.Fatalf("failing create batch: %v %s", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(root, "never")); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(filepath.Join(root, "never"))
		t.Fatalf("aborted create left %v %v", err, entries)
	}

	// Refusals before anything runs.
	g.refused(g.agent, sid, "schema_batch", map[string]any{"ops": []any{replace, map[string]any{"op": "query", "table": "notes", "sql": "SELECT 1"}}},
		"validation error on field 'ops': all ops in a batch must target the same table")
	for _, sql := range []string{"ATTACH DATABASE '/tmp/x.db' AS x", "pragma journal_mode=delete", "select * from pragma_table_info('rows')", "Vacuum"} {
		g.refused(g.agent, sid, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "edges", "sql": sql}}},
			"validation error on field 'sql': a query op may not use ATTACH, DETACH, VACUUM, PRAGMA or load_extension")
	}
	if got := g.must(g.agent, sid, "schema_batch", map[string]any{"ops": []any{}}); got != `{"backups_written":[],"committed":true,"ops_executed":0,"registry_rebuilt":false,"yaml_writes":[]}` {
		t.Fatalf("empty batch: %s", got)
	}
}

// TestSchemaPermissions: without role admin, the schema action is needed
// on top of the CRUD right; raw SQL needs every CRUD right; locks apply.
func TestSchemaPermissions(t *testing.T) {
	g, sid, root := schemaFixture(t)
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "write", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "design", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema", "create", "read"}}}},
		},
		Bindings: []store.Binding{{Role: "writer", Templates: []string{"write"}}, {Role: "designer", Templates: []string{"design"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, writer := g.identity("writer", "mcp", []string{"writer"}, nil, auth.MintOptions{})
	_, designer := g.identity("designer", "mcp", []string{"designer"}, nil, auth.MintOptions{})
	wsid, dsid := g.start(writer), g.start(designer)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, isErr := g.miniToolAs(designer, dsid, "list", map[string]any{"table": "notes"}); !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy never reached the engine")
		}
	}
	def := func(table string) map[string]any {
		return map[string]any{"table": table, "scope": "project", "fields": []any{field("t", "string", false)}}
	}
	g.refused(writer, wsid, "schema_create", def("w1"),
		"schema_create changes table definitions and needs role admin or the schema action on mi/app/w1, got [writer]")
	g.refused(writer, wsid, "schema_update", def("notes"),
		"schema_update changes table definitions and needs role admin or the schema action on mi/app/notes, got [writer]")
	if _, err := os.Stat(filepath.Join(root, "w1")); !os.IsNotExist(err) {
		t.Fatalf("refused create left %v", err)
	}

	if got, want := g.must(designer, dsid, "schema_create", def("d1")),
		`{"created":"d1","schema_path":"`+filepath.Join(root, "d1", "schema.yaml")+`","scope":"project"}`; got != want {
		t.Fatalf("designer schema_create: %s, want %s", got, want)
	}
	g.must(designer, dsid, "create", map[string]any{"table": "d1", "data": map[string]any{"t": "x"}})
	g.refused(designer, dsid, "schema_update", def("d1"),
		"schema_update needs the update right on mi/app/d1 (key_type, locks and templates), got [designer]")
	g.refused(designer, dsid, "schema_batch", map[string]any{"ops": []any{map[string]any{"op": "query", "table": "d1", "sql": "DELETE FROM rows"}}},
		"schema_batch query and replace ops run SQL on the table file that no row scope or column list bounds: they need the schema action and create, read, update and delete on every row and column of mi/app/d1 (key_type, locks and templates): insufficient permissions for this operation on this table, got [designer]")
	if rows := g.listData(designer, dsid, "d1"); len(rows) != 1 {
		t.Fatalf("refused query ran: %v", rows)
	}

	// A lock without 'u' refuses schema_update even to admin.
	if _, err := g.st.AddLock(ctx, store.Lock{ProjectID: g.proj.ID, Pattern: "mi/app/notes", Mask: "cr-d"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := g.restDo("PUT", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?title=eq.nothing", g.admin, map[string]any{"body": "x"})
		if r.status == 403 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock never reached the engine: %d %s", r.status, r.raw)
		}
	}
	want := "schema_update needs the update right on mi/app/notes (key_type, locks and templates), got [admin]"
	if text, isErr := g.miniTool(sid, "schema_update", map[string]any{"table": "notes", "scope": "project", "fields": []any{}, "dry_run": true}); !isErr || text != want {
		t.Fatalf("locked schema_update: %q, want %q", text, want)
	}
}

// TestSchemaDropInScopes: in the drop-in mode the scopes are the user and
// project directories; a table created in the user dir is served at once.
func TestSchemaDropInScopes(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	g := dropInGateway(t, user, project)
	sid := g.start(g.agent)
	def := map[string]any{"table": "emo", "scope": "user", "fields": []any{field("text", "string", true)}}
	if got, want := g.must(g.agent, sid, "schema_create", def), `{"created":"emo","schema_path":"`+filepath.Join(user, "emo", "schema.yaml")+`","scope":"user"}`; got != want {
		t.Fatalf("user scope: %s, want %s", got, want)
	}
	g.must(g.agent, sid, "create", map[string]any{"table": "emo", "data": map[string]any{"text": "hi"}})
	if got := g.listData(g.agent, sid, "emo"); !slices.Equal(got, []string{`{"text":"hi"}`}) {
		t.Fatalf("list: %v", got)
	}
	// The project scope has no emo: TABLE_NOT_FOUND there.
	g.refused(g.agent, sid, "schema_update", map[string]any{"table": "emo", "scope": "project", "fields": []any{}}, "table not found: emo")
	g.must(g.agent, sid, "schema_update", map[string]any{"table": "emo", "scope": "user", "fields": []any{field("text", "string", false)}})
	if names := backupNames(t, user); len(names) != 2 {
		t.Fatalf("user backups %v", names)
	}
	if names := backupNames(t, project); len(names) != 0 {
		t.Fatalf("project backups %v", names)
	}
}
