package mcp_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/store"
)

// materializeAll asks row_materialize for every note as JSON at dest.
func (g *gateway) materializeAll(sid, dest string, extra map[string]any) (string, bool) {
	g.t.Helper()
	args := map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter",
		"filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}}, "fields": map[string]any{"mode": "all"}, "format": "json", "dest": dest}
	for k, v := range extra {
		args[k] = v
	}
	return g.miniTool(sid, "row_materialize", args)
}

// absent fails unless nothing exists at path.
func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("%s exists (%v): a refused call wrote it", path, err)
	}
}

// emptyDir fails unless dir holds nothing.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("%s: %v %v: a refused call wrote there", dir, entries, err)
	}
}

// TestExportConfinement: on the gateway, row_materialize and data_snapshot
// write only under the caller's export directory
// <data dir>/exports/<org>/<project>: an absolute path elsewhere, a
// relative one climbing out with "..", another project's directory, a
// symbolic link out of the directory (on the way or as the file itself)
// are refused with PATH_NOT_ALLOWED naming the allowed directory, and
// nothing is created; inside, relative and absolute dests work, through a
// link that stays inside too, and the files are private (0600).
func TestExportConfinement(t *testing.T) {
	g := newGateway(t, time.Minute)
	sid := g.start(g.agent)
	ids, _ := g.twoNotes(sid)
	base, exports := g.exports(), filepath.Join(g.dir, "exports")
	allowed := "; files may be written only under " + base
	notAllowed := func(what, text string, isErr bool, path, reason string) {
		t.Helper()
		if want := "path not allowed '" + path + "': " + reason + allowed; !isErr || text != want {
			t.Fatalf("%s: %v %q\nwant %q", what, isErr, text, want)
		}
	}

	// Outside the export directory: refused before anything is made.
	rnd := make([]byte, 8)
	_, _ = rand.Read(rnd)
	evil := filepath.Join(os.TempDir(), "evil-"+hex.EncodeToString(rnd))
	t.Cleanup(func() { os.RemoveAll(evil) })
	for _, c := range []struct {
		name, dest string
		extra      map[string]any
		shown      string
	}{
		{"absolute elsewhere", evil + "/x", nil, evil + "/x"},
		{"absolute elsewhere, concat", evil + "/x", map[string]any{"concat": true}, evil},
		{"absolute elsewhere, dry_run", evil + "/x", map[string]any{"dry_run": true}, evil + "/x"},
		{"relative climbing out", "../../x", nil, filepath.Join(exports, "x")},
		{"relative climbing out, concat", "../../x/all.json", map[string]any{"concat": true}, filepath.Join(exports, "x")},
		{"another project", filepath.Join(exports, "demo", "other"), nil, filepath.Join(exports, "demo", "other")},
		{"the export root itself", exports, nil, exports},
		{"the data dir", g.dir, nil, g.dir},
	} {
		text, isErr := g.materializeAll(sid, c.dest, c.extra)
		notAllowed(c.name, text, isErr, c.shown, "outside the export roots")
	}
	absent(t, evil)
	absent(t, filepath.Join(exports, "x"))
	absent(t, filepath.Join(exports, "demo", "other"))
	absent(t, base) // nothing made, not even the caller's own directory

	// A symbolic link inside the directory that leads out of it, on the
	// way or as the file itself.
	outside := t.TempDir()
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{filepath.Join(base, "link"), filepath.Join(base, "link", "deeper"), "link/deeper"} {
		text, isErr := g.materializeAll(sid, dest, nil)
		notAllowed(dest, text, isErr, filepath.Join(base, "link"), "a symbolic link out of the export directory")
	}
	victim := filepath.Join(outside, "victim.json")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(base, "all.json")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"overwrite", "error"} {
		text, isErr := g.materializeAll(sid, filepath.Join(base, "all.json"), map[string]any{"concat": true, "write_mode": mode})
		notAllowed("link as the file, "+mode, text, isErr, filepath.Join(base, "all.json"), "a symbolic link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("refused calls wrote outside: %v", entries)
	}

	// Inside: a relative dest is taken under the directory; absolute works;
	// a link that stays inside is followed.
	text, isErr := g.materializeAll(sid, "reports", nil)
	var res matResult
	if err := json.Unmarshal([]byte(text), &res); isErr || err != nil || res.Count != 2 {
		t.Fatalf("relative dest inside: %s", text)
	}
	for _, f := range res.Files {
		if filepath.Dir(f.Path) != filepath.Join(base, "reports") || !slices.Contains(ids, strings.TrimSuffix(filepath.Base(f.Path), ".json")) {
			t.Fatalf("file %s", f.Path)
		}
		fi, err := os.Stat(f.Path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", f.Path, fi.Mode(), err)
		}
	}
	if err := os.MkdirAll(filepath.Join(base, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	text, isErr = g.materializeAll(sid, filepath.Join(base, "alias", "all.json"), map[string]any{"concat": true})
	if err := json.Unmarshal([]byte(text), &res); isErr || err != nil || res.Count != 1 || res.Files[0].Path != filepath.Join(base, "real", "all.json") {
		t.Fatalf("link inside: %s", text)
	}
	if _, err := os.Stat(filepath.Join(base, "real", "all.json")); err != nil {
		t.Fatal(err)
	}

	// data_snapshot writes under the same directory, and a link out of it
	// is refused there too.
	r, text := g.snapshot(sid, map[string]any{"table": "notes"})
	snaps := filepath.Join(base, "_snapshots", "app")
	if len(r.Snapshotted) != 1 || r.Snapshotted[0].Path != filepath.Join(snaps, fmt.Sprintf("notes.%d.db", *r.Snapshotted[0].Secs)) {
		t.Fatalf("snapshot: %s", text)
	}
	if n := countRows(t, r.Snapshotted[0].Path); n != 2 {
		t.Fatalf("snapshot holds %d rows", n)
	}
	if err := os.RemoveAll(filepath.Join(base, "_snapshots")); err != nil {
		t.Fatal(err)
	}
	outside2 := t.TempDir()
	if err := os.Symlink(outside2, filepath.Join(base, "_snapshots")); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{{"table": "notes"}, {"dry_run": true}} {
		text, isErr = g.miniTool(sid, "data_snapshot", args)
		notAllowed("snapshot through a link", text, isErr, filepath.Join(base, "_snapshots"), "a symbolic link out of the export directory")
	}
	emptyDir(t, outside2)

	// A link in place of the project's own directory leads out of it too.
	if err := os.RemoveAll(filepath.Join(exports, "demo")); err != nil {
		t.Fatal(err)
	}
	outside3 := t.TempDir()
	if err := os.Symlink(outside3, filepath.Join(exports, "demo")); err != nil {
		t.Fatal(err)
	}
	text, isErr = g.materializeAll(sid, "reports", nil)
	notAllowed("org dir is a link", text, isErr, filepath.Join(exports, "demo"), "a symbolic link out of the export directory")
	text, isErr = g.miniTool(sid, "data_snapshot", map[string]any{"table": "notes"})
	notAllowed("org dir is a link, snapshot", text, isErr, filepath.Join(exports, "demo"), "a symbolic link out of the export directory")
	emptyDir(t, outside3)
}

// TestExportDropIn: the drop-in mode keeps mini-app-mcp's rule for its one
// local user: any absolute dest, a relative one refused.
func TestExportDropIn(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	if err := mi.CreateTable(user, "emo", []byte("table: emo\nfields:\n  - name: text\n    type: string\n")); err != nil {
		t.Fatal(err)
	}
	g := dropInGateway(t, user, project)
	sid := g.start(g.agent)
	text, isErr := g.miniTool(sid, "create", map[string]any{"table": "emo", "data": map[string]any{"text": "hi"}})
	var row struct{ ID string }
	if err := json.Unmarshal([]byte(text), &row); isErr || err != nil {
		t.Fatalf("create: %s", text)
	}
	args := func(dest string) map[string]any {
		return map[string]any{"table": "emo", "selector": map[string]any{"type": "by_id", "id": row.ID},
			"fields": map[string]any{"mode": "all"}, "format": "raw", "dest": dest}
	}
	dest := filepath.Join(t.TempDir(), "anywhere")
	text, isErr = g.miniTool(sid, "row_materialize", args(dest))
	path := dest + "/" + row.ID + ".txt"
	if b, err := os.ReadFile(path); isErr || err != nil || string(b) != "hi" || !strings.Contains(text, `"path":"`+path+`"`) {
		t.Fatalf("drop-in absolute dest: %s (%v)", text, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("drop-in file mode %v", fi.Mode())
	}
	if text, isErr := g.miniTool(sid, "row_materialize", args("rel/x")); !isErr || text != "materialize dest must be absolute: rel/x" {
		t.Fatalf("drop-in relative dest: %v %s", isErr, text)
	}
}

// auditOf waits for the audit entries of one identity on one object with
// one action, at least n of them, and returns them oldest first.
func (g *gateway) auditOf(identity, object, action string, n int) []store.AuditEntry {
	g.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		es, err := g.st.AuditLog(context.Background(), g.proj.ID, store.AuditFilter{Identity: identity, Object: object, Action: action, Limit: store.MaxAuditLimit})
		if err != nil {
			g.t.Fatal(err)
		}
		if len(es) >= n {
			slices.Reverse(es)
			return es
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("audit of %s %s %s: %d entries, want %d", identity, action, object, len(es), n)
		}
	}
}

// waitPolicy waits until a token may list notes (a policy reaches the
// engine within its poll interval).
func (g *gateway) waitPolicy(token, sid string) {
	g.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text, isErr := g.miniToolAs(token, sid, "list", map[string]any{"table": "notes"})
		if !isErr {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("the policy never reached the engine: %s", text)
		}
	}
}

// TestSchemaBatchGates: schema_batch's query and replace ops pass the
// pipeline's gates like any write. A -r-- token, a -r-- lock on the table,
// a role without delete, a row-scoped role and a column-limited role are
// all refused before any SQL runs, and each refusal is audited as REST's
// are (outcome FORBIDDEN, the pipeline's message); a replace whose match
// holds null is refused before any SQL; an admin's batch still runs and is
// audited.
func TestSchemaBatchGates(t *testing.T) {
	g, sid, _ := schemaFixture(t)
	ctx := context.Background()
	original := g.listData(g.agent, sid, "notes")
	if len(original) != 3 {
		t.Fatalf("bootstrap notes: %v", original)
	}
	unchanged := func(what string) {
		t.Helper()
		if got := g.listData(g.agent, sid, "notes"); !slices.Equal(got, original) {
			t.Fatalf("%s: rows %v, want %v", what, got, original)
		}
	}
	deleteAll := map[string]any{"ops": []any{map[string]any{"op": "query", "table": "notes", "sql": "DELETE FROM rows"}}}
	replace := map[string]any{"ops": []any{map[string]any{"op": "replace", "table": "notes", "match": map[string]any{"title": "x"},
		"items": []any{map[string]any{"title": "planted"}}}}}
	raw := "schema_batch query and replace ops run SQL on the table file that no row scope or column list bounds: they need the schema action and %s on every row and column of mi/app/notes (key_type, locks and templates): %s"
	const crud, crd = "create, read, update and delete", "create, read and delete"

	pol := store.Policy{
		Templates: []store.Template{
			{Name: "no-delete", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema", "create", "read", "update"}}}},
			{Name: "all", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema", "create", "read", "update", "delete"}}}},
			{Name: "some-columns", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"schema", "create", "read", "update", "delete"}, Columns: []string{"id", "title", "created_at", "updated_at"}}}},
		},
		Bindings: []store.Binding{{Role: "editor", Templates: []string{"no-delete"}}, {Role: "scoped", Templates: []string{"all"}},
			{Role: "narrow", Templates: []string{"some-columns"}}},
		Scopes: []store.Scope{{Role: "scoped", Object: "mi/app/*", Filter: "title=eq.{identity}"}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, ro := g.identity("ro", "mcp", []string{"admin"}, nil, auth.MintOptions{KeyType: "-r--"})
	_, editor := g.identity("editor", "mcp", []string{"editor"}, nil, auth.MintOptions{})
	_, scoped := g.identity("scoped", "mcp", []string{"scoped"}, nil, auth.MintOptions{})
	_, narrow := g.identity("narrow", "mcp", []string{"narrow"}, nil, auth.MintOptions{})
	sessions := map[string]string{}
	for name, tok := range map[string]string{"ro": ro, "editor": editor, "scoped": scoped, "narrow": narrow} {
		sessions[name] = g.start(tok)
		g.waitPolicy(tok, sessions[name])
	}
	refusal := "insufficient permissions for this operation on this table, got [%s]"
	for _, c := range []struct {
		who, token string
		args       map[string]any
		want       string
	}{
		{"ro", ro, deleteAll, fmt.Sprintf(raw, crud, fmt.Sprintf(refusal, "admin"))},
		{"ro", ro, replace, fmt.Sprintf(raw, crd, fmt.Sprintf(refusal, "admin"))},
		{"editor", editor, deleteAll, fmt.Sprintf(raw, crud, fmt.Sprintf(refusal, "editor"))},
		{"editor", editor, replace, fmt.Sprintf(raw, crd, fmt.Sprintf(refusal, "editor"))},
		{"scoped", scoped, deleteAll, fmt.Sprintf(raw, crud, fmt.Sprintf(refusal, "scoped"))},
		{"narrow", narrow, deleteAll, fmt.Sprintf(raw, crud, fmt.Sprintf(refusal, "narrow"))},
	} {
		g.refused(c.token, sessions[c.who], "schema_batch", c.args, c.want)
		unchanged(c.who)
	}
	// What the editor may do without raw SQL still works: a schema op.
	g.must(editor, sessions["editor"], "schema_batch", map[string]any{"dry_run": true, "ops": []any{
		map[string]any{"op": "schema_update", "table": "notes", "scope": "project", "fields": []any{field("title", "string", true), field("body", "string", false)}}}})

	// Each refusal is in the audit log as REST's: outcome FORBIDDEN and the
	// pipeline's message. The REST refusal of the same -r-- token is the
	// yardstick.
	if r := g.restDo("DELETE", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?all=true", ro, nil); r.status != 403 {
		t.Fatalf("REST delete with -r--: %d %s", r.status, r.raw)
	}
	rest := g.auditOf("ro", "mi/app/notes", "delete", 1)[0]
	for who, n := range map[string]int{"ro": 2, "editor": 2, "scoped": 1, "narrow": 1} {
		for _, e := range g.auditOf(who, "mi/app/notes", "write", n) {
			if e.Outcome != rest.Outcome || e.Message != fmt.Sprintf(refusal, e.Roles[0]) || e.Rows != 0 {
				t.Fatalf("audit of %s: %+v (REST's: %+v)", who, e, rest)
			}
		}
	}
	if rest.Outcome != "FORBIDDEN" || rest.Message != fmt.Sprintf(refusal, "admin") {
		t.Fatalf("REST's audit: %+v", rest)
	}

	// A replace whose match is null or holds null is refused before any
	// SQL, with mini-app-mcp's validation error.
	for _, c := range []struct {
		match any
		want  string
	}{
		{nil, "validation error on field 'match': match must be a non-empty object"},
		{map[string]any{"title": nil}, "validation error on field 'match.title': match values must be strings"},
	} {
		args := map[string]any{"ops": []any{map[string]any{"op": "replace", "table": "notes", "match": c.match,
			"items": []any{map[string]any{"title": "planted"}}}}}
		g.refused(g.agent, sid, "schema_batch", args, c.want)
		unchanged("null match")
	}

	// A -r-- lock on the table refuses the admin's raw SQL, with the
	// lock's message, as it refuses REST's write.
	if _, err := g.st.AddLock(ctx, store.Lock{ProjectID: g.proj.ID, Pattern: "mi/app/notes", Mask: "-r--"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// An update matching no row, refused once the lock is in force.
		r := g.restDo("PUT", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?title=eq.nothing", g.admin, map[string]any{"body": "x"})
		if r.status == 403 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock never reached the engine: %d %s", r.status, r.raw)
		}
	}
	locked := "this table is locked for create, got [admin]"
	if r := g.restDo("POST", "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes", g.admin, map[string]any{"title": "x"}); r.status != 403 {
		t.Fatalf("REST insert under the lock: %d %s", r.status, r.raw)
	} else if _, msg := r.httpError(t); msg != locked {
		t.Fatalf("REST insert under the lock: %q, want %q", msg, locked)
	}
	g.refused(g.agent, sid, "schema_batch", deleteAll, fmt.Sprintf(raw, crud, locked))
	g.refused(g.agent, sid, "schema_batch", replace, fmt.Sprintf(raw, crd, locked))
	unchanged("lock")
	// (The first two entries are the null matches', refused after the
	// gates.)
	es := g.auditOf("agent", "mi/app/notes", "write", 4)
	if es[0].Outcome != "VALIDATION_ERROR" || es[1].Outcome != "VALIDATION_ERROR" || es[2].Outcome != "FORBIDDEN" || es[2].Message != locked ||
		es[3].Outcome != "FORBIDDEN" || es[3].Message != locked {
		t.Fatalf("audit of the locked batches: %+v", es)
	}
	if err := g.st.RemoveLock(ctx, g.proj.ID, "mi/app/notes"); err != nil {
		t.Fatal(err)
	}

	// The admin's batch runs once the lock is gone, and is audited with
	// the rows it touched.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text, isErr := g.miniTool(sid, "schema_batch", deleteAll)
		if !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch after unlock: %s", text)
		}
	}
	if got := g.listData(g.agent, sid, "notes"); len(got) != 0 {
		t.Fatalf("rows after DELETE: %v", got)
	}
	// (The polls refused while the lock was still in force are audited
	// too: wait for the batch's own entry, the newest.)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		es = g.auditOf("agent", "mi/app/notes", "write", 4)
		last := es[len(es)-1]
		if last.Outcome == "ok" {
			if last.Rows != 3 {
				t.Fatalf("audit of the batch: %+v", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit of the batch: %+v", last)
		}
	}
}

// TestSchemaResourceHidesColumns: the schema://yaml resource of a table
// lists only the fields the caller may read, as info and schema://json do;
// a caller who sees every field gets the file as it is.
func TestSchemaResourceHidesColumns(t *testing.T) {
	g := newGateway(t, time.Minute)
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{{Name: "titles", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}, Columns: []string{"id", "title", "created_at", "updated_at"}}}}},
		Bindings:  []store.Binding{{Role: "titles", Templates: []string{"titles"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, tok := g.identity("titles", "mcp", []string{"titles"}, nil, auth.MintOptions{})
	sid := g.start(tok)
	g.waitPolicy(tok, sid)
	read := func(token, sid, uri string) string {
		t.Helper()
		h := map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "resources/read", "Mcp-Name": uri,
			"LB-Access-Token": token, mcp.SessionHeader: sid}
		r := g.post(h, rpcBody("resources/read", map[string]any{"uri": uri, "_meta": meta()}))
		var m struct {
			Result struct {
				Contents []struct{ Text string }
			}
		}
		if err := json.Unmarshal(r.raw, &m); err != nil || r.status != 200 || len(m.Result.Contents) != 1 {
			t.Fatalf("resources/read %s: %d %s", uri, r.status, r.raw)
		}
		return m.Result.Contents[0].Text
	}
	file, err := os.ReadFile(filepath.Join(g.dir, "mini-app", "app", "notes", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(file), "name: body") {
		t.Fatalf("the bootstrap table has no body field: %s", file)
	}
	got := read(tok, sid, "schema://yaml?table=notes")
	want := strings.Replace(string(file), "  - name: body\n    type: string\n    description: Free text.\n", "", 1)
	if got != want {
		t.Fatalf("schema://yaml for a title-only role:\n%s\nwant\n%s", got, want)
	}
	// The same view as info's.
	text, isErr := g.miniToolAs(tok, sid, "info", map[string]any{"table": "notes"})
	if isErr || strings.Contains(text, "body") || !strings.Contains(text, "title") {
		t.Fatalf("info: %s", text)
	}
	// The admin sees the file byte for byte.
	asid := g.start(g.agent)
	if got := read(g.agent, asid, "schema://yaml?table=notes"); got != string(file) {
		t.Fatalf("schema://yaml for admin:\n%s\nwant\n%s", got, file)
	}
}

// TestMiTooManyValues: a REST filter binding more values than SQLite
// accepts answers 413 naming the limit, not 503 with Retry-After, on reads
// and on the selection of a delete; a filter under the limit still runs.
func TestMiTooManyValues(t *testing.T) {
	g := newGateway(t, time.Minute)
	vals := make([]string, 40000)
	for i := range vals {
		vals[i] = strconv.Itoa(i)
	}
	in := url.QueryEscape("in." + strings.Join(vals, ","))
	path := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"
	for _, c := range []struct{ method, query string }{
		{"GET", "?ps=10&pg=0&title=" + in},
		{"DELETE", "?title=" + in},
	} {
		r := g.restDo(c.method, path+c.query, g.admin, nil)
		code, msg := r.httpError(t)
		if r.status != 413 || code != "TOO_LARGE" || !strings.HasPrefix(msg, "statement has 4000") || !strings.HasSuffix(msg, " values, SQLite accepts at most 32766") || r.header.Get("Retry-After") != "" {
			t.Fatalf("%s with 40000 values: %d %s %q (Retry-After %q)", c.method, r.status, code, msg, r.header.Get("Retry-After"))
		}
	}
	if r := g.restDo("GET", path+"?ps=10&pg=0&title="+url.QueryEscape("in."+strings.Join(vals[:30000], ",")), g.admin, nil); r.status != 200 {
		t.Fatalf("30000 values: %d %s", r.status, r.raw)
	}
	if got := len(g.restJSONRows(path + "?ps=10&pg=0")); got != 3 {
		t.Fatalf("the refused delete removed rows: %d left", got)
	}
}

// restJSONRows reads rows over REST as the bootstrap admin.
func (g *gateway) restJSONRows(path string) []map[string]any {
	g.t.Helper()
	r := g.restDo("GET", path, g.admin, nil)
	var m struct{ Data []map[string]any }
	if err := json.Unmarshal(r.raw, &m); err != nil || r.status != 200 {
		g.t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	return m.Data
}
