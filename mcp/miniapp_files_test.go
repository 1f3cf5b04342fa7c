package mcp_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/mcp"
	"github.com/littlebitlabs/minimal/miniapp"
	"github.com/littlebitlabs/minimal/sessions"
	"github.com/littlebitlabs/minimal/store"
)

type matFile struct {
	Path   string  `json:"path"`
	Bytes  int     `json:"bytes"`
	SHA256 string  `json:"sha256"`
	RowID  *string `json:"row_id"`
}

type matResult struct {
	Count int       `json:"count"`
	Files []matFile `json:"files"`
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// exports is the bootstrap project's export directory: the tools that
// write files write under it (<data dir>/exports/<org>/<project>).
func (g *gateway) exports() string { return filepath.Join(g.dir, "exports", "demo", "demo") }

// matOK runs row_materialize and checks each file entry against the bytes
// want (in order); on disk unless dry.
func (g *gateway) matOK(sid string, args map[string]any, dry bool, want ...[]byte) matResult {
	g.t.Helper()
	text, isErr := g.miniTool(sid, "row_materialize", args)
	var res matResult
	if isErr || json.Unmarshal([]byte(text), &res) != nil {
		g.t.Fatalf("row_materialize %v: %s", args, text)
	}
	if res.Count != len(want) || len(res.Files) != len(want) {
		g.t.Fatalf("row_materialize: %d files, want %d: %s", res.Count, len(want), text)
	}
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for i, f := range res.Files {
		if !hex64.MatchString(f.SHA256) || f.SHA256 != sha(want[i]) || f.Bytes != len(want[i]) {
			g.t.Fatalf("file %d: %+v, want %d bytes %s:\n%q", i, f, len(want[i]), sha(want[i]), want[i])
		}
		b, err := os.ReadFile(f.Path)
		if dry {
			if err == nil {
				g.t.Fatalf("dry_run wrote %s", f.Path)
			}
			continue
		}
		if err != nil || string(b) != string(want[i]) || sha(b) != f.SHA256 {
			g.t.Fatalf("file %s: %q (%v), want %q", f.Path, b, err, want[i])
		}
	}
	return res
}

// twoNotes empties the bootstrap's notes table and creates two rows; it
// returns their ids in the table's default order (created_at desc, as
// list returns it).
func (g *gateway) twoNotes(sid string) (ids []string, rows map[string]map[string]any) {
	g.t.Helper()
	text, _ := g.miniTool(sid, "list", map[string]any{"table": "notes"})
	var old []struct{ ID string }
	_ = json.Unmarshal([]byte(text), &old)
	for _, r := range old {
		if _, isErr := g.miniTool(sid, "delete", map[string]any{"table": "notes", "id": r.ID}); isErr {
			g.t.Fatalf("delete %s", r.ID)
		}
	}
	for _, d := range []map[string]any{{"title": "alpha", "body": "line1\nline2"}, {"title": "beta: 2"}} {
		if text, isErr := g.miniTool(sid, "create", map[string]any{"table": "notes", "data": d}); isErr {
			g.t.Fatalf("create: %s", text)
		}
	}
	text, _ = g.miniTool(sid, "list", map[string]any{"table": "notes"})
	var now []struct {
		ID   string
		Data map[string]any
	}
	if err := json.Unmarshal([]byte(text), &now); err != nil || len(now) != 2 {
		g.t.Fatalf("list: %s", text)
	}
	rows = map[string]map[string]any{}
	for _, r := range now {
		ids = append(ids, r.ID)
		rows[r.Data["title"].(string)] = map[string]any{"id": r.ID}
	}
	return ids, rows
}

// TestMaterializeFormats: every format, per row and concatenated, byte for
// byte, with the SHA-256 of the bytes; dry_run writes nothing.
func TestMaterializeFormats(t *testing.T) {
	g := newGateway(t, time.Minute)
	sid := g.start(g.agent)
	order, rows := g.twoNotes(sid)
	a, b := rows["alpha"]["id"].(string), rows["beta: 2"]["id"].(string)
	perRow := map[string]map[string]string{ // format → id → content
		// Fields in byte order, as mini-app-mcp's serde_json map holds them.
		"raw":      {a: "line1\nline2\nalpha", b: "null\nbeta: 2"},
		"markdown": {a: "# " + a + "\n\n## body\n\nline1\nline2\n\n## title\n\nalpha\n", b: "# " + b + "\n\n## body\n\nnull\n\n## title\n\nbeta: 2\n"},
		"json":     {a: "{\n  \"body\": \"line1\\nline2\",\n  \"title\": \"alpha\"\n}", b: "{\n  \"body\": null,\n  \"title\": \"beta: 2\"\n}"},
		"yaml":     {a: "body: |-\n  line1\n  line2\ntitle: alpha\n", b: "body: null\ntitle: 'beta: 2'\n"},
	}
	ext := map[string]string{"raw": "txt", "markdown": "md", "json": "json", "yaml": "yaml"}
	for _, format := range []string{"raw", "markdown", "json", "yaml"} {
		func() { // g's helpers fail the test itself: no subtests
			dir := filepath.Join(g.exports(), "out-"+format)
			// by_id, one file named by the row id.
			res := g.matOK(sid, map[string]any{"table": "notes", "selector": map[string]any{"type": "by_id", "id": a},
				"fields": map[string]any{"mode": "all"}, "format": format, "dest": dir}, false, []byte(perRow[format][a]))
			if f := res.Files[0]; f.Path != dir+"/"+a+"."+ext[format] || f.RowID == nil || *f.RowID != a {
				t.Fatalf("%s by_id file: %+v", format, f)
			}
			// by_filter without concat: one file per row, in list order.
			filter := map[string]any{"type": "in", "field": "title", "values": []any{"alpha", "beta: 2"}}
			var want [][]byte
			for _, id := range order {
				want = append(want, []byte(perRow[format][id]))
			}
			res = g.matOK(sid, map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter", "filter": filter},
				"fields": map[string]any{"mode": "all"}, "format": format, "dest": dir}, false, want...)
			for i, f := range res.Files {
				if *f.RowID != order[i] || f.Path != dir+"/"+order[i]+"."+ext[format] {
					t.Fatalf("%s file %d: %+v", format, i, f)
				}
			}
			// concat: one file, row_id null.
			var all string
			switch format {
			case "raw":
				all = perRow[format][order[0]] + "\n\n" + perRow[format][order[1]]
			case "markdown":
				all = perRow[format][order[0]] + "\n---\n\n" + perRow[format][order[1]]
			case "json":
				indent := func(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
				all = "[\n" + indent(perRow[format][order[0]]) + ",\n" + indent(perRow[format][order[1]]) + "\n]"
			case "yaml":
				all = "---\n" + perRow[format][order[0]] + "---\n" + perRow[format][order[1]]
			}
			file := filepath.Join(g.exports(), "sub-"+format, "all."+ext[format])
			args := map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter", "filter": filter},
				"fields": map[string]any{"mode": "all"}, "format": format, "dest": file, "concat": true, "dry_run": true}
			res = g.matOK(sid, args, true, []byte(all))
			if _, err := os.Stat(filepath.Dir(file)); !os.IsNotExist(err) {
				t.Fatalf("dry_run created the directory: %v", err)
			}
			delete(args, "dry_run")
			res = g.matOK(sid, args, false, []byte(all))
			if f := res.Files[0]; f.Path != file || f.RowID != nil {
				t.Fatalf("%s concat file: %+v", format, f)
			}
		}()
	}
	// A field list, in byte order; the text of the answer exactly.
	dir := filepath.Join(g.exports(), "list")
	text, isErr := g.miniTool(sid, "row_materialize", map[string]any{"table": "notes", "selector": map[string]any{"type": "by_id", "id": b},
		"fields": map[string]any{"mode": "list", "fields": []any{"body", "title"}}, "format": "raw", "dest": dir})
	content := "null\nbeta: 2"
	if want := fmt.Sprintf(`{"count":1,"files":[{"path":"%s/%s.txt","bytes":%d,"sha256":"%s","row_id":"%s"}]}`, dir, b, len(content), sha([]byte(content)), b); isErr || text != want {
		t.Fatalf("list projection:\n got %s\nwant %s", text, want)
	}
	// limit and offset of by_filter.
	g.matOK(sid, map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter", "limit": 1, "offset": 1,
		"filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}}, "fields": map[string]any{"mode": "all"}, "format": "raw",
		"dest": g.exports(), "dry_run": true}, true, []byte(perRow["raw"][order[1]]))
}

// TestMaterializeErrors: the contract's refusals, verbatim, and nothing
// written.
func TestMaterializeErrors(t *testing.T) {
	g := newGateway(t, time.Minute)
	sid := g.start(g.agent)
	_, rows := g.twoNotes(sid)
	a := rows["alpha"]["id"].(string)
	dir := filepath.Join(g.exports(), "errs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"table": "notes", "selector": map[string]any{"type": "by_id", "id": a}, "fields": map[string]any{"mode": "all"},
			"format": "json", "dest": dir}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	existing := filepath.Join(dir, a+".json")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"by_id with concat", base(map[string]any{"concat": true}), "materialize invalid param 'concat': concat=true requires selector=by_filter (ById always yields a single row)"},
		{"unknown field", base(map[string]any{"fields": map[string]any{"mode": "list", "fields": []any{"title", "nope"}}}), "materialize unknown field: nope"},
		{"no such row", base(map[string]any{"selector": map[string]any{"type": "by_id", "id": "00000000-0000-4000-8000-000000000000"}}), "materialize row not found: 00000000-0000-4000-8000-000000000000"},
		{"empty filter result", base(map[string]any{"selector": map[string]any{"type": "by_filter", "filter": map[string]any{"type": "eq", "field": "title", "value": "zzz"}}}), "materialize filter matched zero rows"},
		{"write_mode error", base(map[string]any{"write_mode": "error"}), "materialize dest invalid '" + dir + "/" + a + ".json': file already exists with write_mode=error"},
		{"write_mode error in dry_run", base(map[string]any{"write_mode": "error", "dry_run": true}), "materialize dest invalid '" + dir + "/" + a + ".json': file already exists with write_mode=error"},
		{"unknown table", base(map[string]any{"table": "nope"}), "table not found: nope"},
	} {
		if text, isErr := g.miniTool(sid, "row_materialize", c.args); !isErr || text != c.want {
			t.Fatalf("%s: %v %q, want %q", c.name, isErr, text, c.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Fatalf("refused call touched the file: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("refused calls left files: %v", entries)
	}
	// overwrite (the default) replaces it.
	text, isErr := g.miniTool(sid, "row_materialize", base(map[string]any{"write_mode": "overwrite"}))
	if b, _ := os.ReadFile(existing); isErr || !strings.HasPrefix(string(b), "{\n  \"body\": \"line1\\nline2\"") {
		t.Fatalf("overwrite: %s / %q", text, b)
	}
	// Argument shape errors are the gateway's INVALID refusals, naming
	// the argument, as the other tools answer them (drop-in mode answers
	// mini-app-mcp's JSON-RPC error).
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{base(map[string]any{"format": "xml"}), "format: unknown variant `xml`, expected one of `raw`, `markdown`, `json`, `yaml`"},
		{base(map[string]any{"selector": map[string]any{"type": "ById", "id": a}}), "selector: unknown variant `ById`, expected `by_id` or `by_filter`"},
		{map[string]any{"table": "notes", "fields": map[string]any{"mode": "all"}, "format": "raw", "dest": dir}, "missing field `selector`"},
	} {
		res := g.tool(g.agent, sid, "row_materialize", c.args)
		if code, msg := res.refusal(t); code != "INVALID" || msg != c.want {
			t.Fatalf("%v: %s, want %q", c.args, res.text, c.want)
		}
	}
}

// reader makes an identity (kind mcp, role reader) that may read notes.
func (g *gateway) reader() string {
	g.t.Helper()
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{{Name: "notes-read", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}}}}},
		Bindings:  []store.Binding{{Role: "reader", Templates: []string{"notes-read"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		g.t.Fatal(err)
	}
	_, tok := g.identity("reader", "mcp", []string{"reader"}, nil, auth.MintOptions{})
	sid := g.start(tok)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, isErr := g.miniToolAs(tok, sid, "list", map[string]any{"table": "notes"}); !isErr {
			break
		}
		if time.Now().After(deadline) {
			g.t.Fatal("the reader policy never reached the engine")
		}
	}
	return tok
}

// TestMaterializePermission: a reader may list the table but not write
// files from it; the refusal names its roles.
func TestMaterializePermission(t *testing.T) {
	g := newGateway(t, time.Minute)
	tok := g.reader()
	sid := g.start(tok)
	dir := t.TempDir()
	text, isErr := g.miniToolAs(tok, sid, "row_materialize", map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter",
		"filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}}, "fields": map[string]any{"mode": "all"}, "format": "raw", "dest": dir})
	if want := "row_materialize writes files on the server and needs role admin, got [reader]"; !isErr || text != want {
		t.Fatalf("%v %q, want %q", isErr, text, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("refused call wrote %v", entries)
	}
}

// snapResult is data_snapshot's answer.
type snapResult struct {
	Snapshotted []struct {
		Table, Scope string
		Path         string `json:"snapshot_path"`
		Secs         *int64 `json:"unix_secs"`
	}
	Purged []struct {
		Table   string
		Removed int `json:"generations_removed"`
	}
	Uploaded []struct {
		Table, Key string
		Bytes      int64
	}
	UploadErrors []struct{ Table, Error string } `json:"upload_errors"`
}

func (g *gateway) snapshot(sid string, args map[string]any) (snapResult, string) {
	g.t.Helper()
	text, isErr := g.miniTool(sid, "data_snapshot", args)
	var r snapResult
	if isErr || json.Unmarshal([]byte(text), &r) != nil {
		g.t.Fatalf("data_snapshot %v: %s", args, text)
	}
	return r, text
}

func countRows(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM rows").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func snapNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestSnapshot: a readable copy with the table's rows, retention, dry_run,
// scopes.
func TestSnapshot(t *testing.T) {
	t.Setenv("MINI_APP_SNAPSHOT_RETENTION", "3")
	g := newGateway(t, time.Minute)
	sid := g.start(g.agent)
	snaps := filepath.Join(g.exports(), "_snapshots", "app")

	before := time.Now().Unix()
	r, text := g.snapshot(sid, map[string]any{"table": "notes"})
	if len(r.Snapshotted) != 1 || len(r.Purged) != 0 {
		t.Fatalf("snapshot: %s", text)
	}
	s := r.Snapshotted[0]
	if s.Secs == nil || *s.Secs < before || *s.Secs > time.Now().Unix() {
		t.Fatalf("unix_secs: %s", text)
	}
	want := fmt.Sprintf(`{"purged":[],"snapshotted":[{"scope":"project","snapshot_path":"%s","table":"notes","unix_secs":%d}]}`,
		filepath.Join(snaps, fmt.Sprintf("notes.%d.db", *s.Secs)), *s.Secs)
	if text != want {
		t.Fatalf("answer:\n got %s\nwant %s", text, want)
	}
	if n := countRows(t, s.Path); n != 3 {
		t.Fatalf("snapshot holds %d rows, want 3", n)
	}
	if got := snapNames(t, snaps); len(got) != 1 || got[0] != filepath.Base(s.Path) {
		t.Fatalf("snapshot dir: %v", got)
	}

	// Older generations, then dry_run: the preview, and nothing written.
	for _, ts := range []int{100, 200, 300, 400} {
		if err := os.WriteFile(filepath.Join(snaps, fmt.Sprintf("notes.%d.db", ts)), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(snaps, "other.5.db"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	listing := snapNames(t, snaps)
	text, isErr := g.miniTool(sid, "data_snapshot", map[string]any{"dry_run": true})
	if want := `{"affects":{"row_counts":{"notes":3},"target_tables":["notes"],"would_purge_generations":{"notes":2}},"dry_run":true}`; isErr || text != want {
		t.Fatalf("dry_run:\n got %s\nwant %s", text, want)
	}
	if got := snapNames(t, snaps); strings.Join(got, " ") != strings.Join(listing, " ") {
		t.Fatalf("dry_run changed the dir: %v -> %v", listing, got)
	}

	// A real run keeps the newest 3 of 6 generations.
	time.Sleep(time.Until(time.Unix(*s.Secs+1, 0))) // a distinct unix_secs
	r, text = g.snapshot(sid, map[string]any{"scope": "project"})
	if len(r.Snapshotted) != 1 || len(r.Purged) != 1 || r.Purged[0].Table != "notes" || r.Purged[0].Removed != 3 {
		t.Fatalf("retention: %s", text)
	}
	newest := filepath.Base(r.Snapshotted[0].Path)
	wantNames := []string{newest, filepath.Base(s.Path), "notes.400.db", "other.5.db"}
	sort.Strings(wantNames)
	if got := snapNames(t, snaps); strings.Join(got, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("after retention: %v, want %v", got, wantNames)
	}

	// scope user holds no table here; a bad scope is a SNAPSHOT_ERROR.
	if _, text := g.snapshot(sid, map[string]any{"table": "notes", "scope": "user"}); text != `{"purged":[],"snapshotted":[]}` {
		t.Fatalf("scope user: %s", text)
	}
	if text, isErr := g.miniTool(sid, "data_snapshot", map[string]any{"scope": "team"}); !isErr || text != "snapshot error: unrecognised scope 'team': expected 'project' or 'user'" {
		t.Fatalf("bad scope: %v %s", isErr, text)
	}
	if text, isErr := g.miniTool(sid, "data_snapshot", map[string]any{"table": "nope"}); !isErr || text != "table not found: nope" {
		t.Fatalf("unknown table: %v %s", isErr, text)
	}
}

// TestSnapshotUpload: upload to an in-process S3 server and back; without
// the configuration, UPLOAD_NOT_CONFIGURED before anything is written.
func TestSnapshotUpload(t *testing.T) {
	for _, k := range []string{"MINI_APP_S3_ENDPOINT", "MINI_APP_S3_BUCKET", "MINI_APP_S3_ACCESS_KEY_ID", "MINI_APP_S3_SECRET_ACCESS_KEY", "MINI_APP_S3_PREFIX", "MINI_APP_S3_REGION"} {
		t.Setenv(k, "")
	}
	g := newGateway(t, time.Minute)
	sid := g.start(g.agent)
	snaps := filepath.Join(g.exports(), "_snapshots", "app")
	t.Setenv("MINI_APP_S3_BUCKET", "snaps")
	text, isErr := g.miniTool(sid, "data_snapshot", map[string]any{"upload": true})
	if want := "upload not configured: missing env: MINI_APP_S3_ENDPOINT, MINI_APP_S3_ACCESS_KEY_ID, MINI_APP_S3_SECRET_ACCESS_KEY"; !isErr || text != want {
		t.Fatalf("%v %q, want %q", isErr, text, want)
	}
	if _, err := os.Stat(snaps); !os.IsNotExist(err) {
		t.Fatalf("unconfigured upload wrote: %v", err)
	}

	backend := s3mem.New()
	if err := backend.CreateBucket("snaps"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3.Close)
	t.Setenv("MINI_APP_S3_ENDPOINT", s3.URL)
	t.Setenv("MINI_APP_S3_ACCESS_KEY_ID", "AKID")
	t.Setenv("MINI_APP_S3_SECRET_ACCESS_KEY", "SECRET")
	r, text := g.snapshot(sid, map[string]any{"table": "notes", "upload": true})
	if len(r.Snapshotted) != 1 || len(r.Uploaded) != 1 || len(r.UploadErrors) != 0 {
		t.Fatalf("upload: %s", text)
	}
	local, err := os.ReadFile(r.Snapshotted[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	u := r.Uploaded[0]
	if u.Table != "notes" || u.Key != "mini-app-snapshots/"+filepath.Base(r.Snapshotted[0].Path) || u.Bytes != int64(len(local)) {
		t.Fatalf("uploaded: %s", text)
	}
	obj, err := backend.GetObject("snaps", u.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	if err != nil || string(remote) != string(local) {
		t.Fatalf("remote object: %d bytes (%v), local %d", len(remote), err, len(local))
	}

	// A failing destination is reported per table; the snapshot stands.
	t.Setenv("MINI_APP_S3_BUCKET", "missing")
	t.Setenv("MINI_APP_S3_PREFIX", "p/")
	r, text = g.snapshot(sid, map[string]any{"table": "notes", "upload": true})
	if len(r.Snapshotted) != 1 || len(r.Uploaded) != 0 || len(r.UploadErrors) != 1 || r.UploadErrors[0].Table != "notes" ||
		!strings.HasPrefix(r.UploadErrors[0].Error, "upload failed: put 'p/notes.") {
		t.Fatalf("failing upload: %s", text)
	}
}

// TestSnapshotPermission: a reader may list the table but not snapshot it.
func TestSnapshotPermission(t *testing.T) {
	g := newGateway(t, time.Minute)
	tok := g.reader()
	sid := g.start(tok)
	text, isErr := g.miniToolAs(tok, sid, "data_snapshot", map[string]any{"table": "notes"})
	if want := "data_snapshot writes files on the server and needs role admin, got [reader]"; !isErr || text != want {
		t.Fatalf("%v %q, want %q", isErr, text, want)
	}
	for _, dir := range []string{filepath.Join(g.dir, "mini-app", "app", "_snapshots"), filepath.Join(g.dir, "exports")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("refused snapshot wrote %s: %v", dir, err)
		}
	}
}

// dropInGateway serves the MCP face over the drop-in mode's private control
// plane (user and project directories), as `minimal mcp` runs it.
func dropInGateway(t *testing.T, user, project string) *gateway {
	t.Helper()
	ctx := context.Background()
	l, err := miniapp.DropIn(ctx, miniapp.DropInConfig{UserDir: user, ProjectDir: project})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.New(ctx, l.Store, engine.Config{Logger: log, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	srv := mcp.New(mcp.Deps{Engine: eng, Verifier: auth.NewVerifier(l.Store, l.Key), Store: l.Store, Sessions: sessions.New(l.Store, time.Minute), MiniApp: l.Config},
		mcp.Config{MaxBodyBytes: 1 << 16, MaxPageSize: 100, Version: "test", Logger: log})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); cancel(); eng.Close() })
	return &gateway{t: t, st: l.Store, mcp: hs, srv: srv, agent: l.Token}
}

// TestSnapshotDropInScopes: in the drop-in mode the user and project
// directories are the scopes user and project, each its own scope root.
func TestSnapshotDropInScopes(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	yaml := func(name string) []byte {
		return []byte("table: " + name + "\nfields:\n  - name: text\n    type: string\n")
	}
	if err := mi.CreateTable(user, "emo", yaml("emo")); err != nil {
		t.Fatal(err)
	}
	if err := mi.CreateTable(project, "todo", yaml("todo")); err != nil {
		t.Fatal(err)
	}
	g := dropInGateway(t, user, project)
	sid := g.start(g.agent)
	for _, c := range []struct{ table, text string }{{"emo", "e1"}, {"todo", "t1"}, {"todo", "t2"}} {
		if text, isErr := g.miniTool(sid, "create", map[string]any{"table": c.table, "data": map[string]any{"text": c.text}}); isErr {
			t.Fatalf("create: %s", text)
		}
	}
	text, isErr := g.miniTool(sid, "data_snapshot", map[string]any{"dry_run": true})
	if want := `{"affects":{"row_counts":{"emo":1,"todo":2},"target_tables":["emo","todo"],"would_purge_generations":{"emo":0,"todo":0}},"dry_run":true}`; isErr || text != want {
		t.Fatalf("dry_run:\n got %s\nwant %s", text, want)
	}
	r, text := g.snapshot(sid, map[string]any{"scope": "user"})
	if len(r.Snapshotted) != 1 || r.Snapshotted[0].Table != "emo" || r.Snapshotted[0].Scope != "user" ||
		r.Snapshotted[0].Path != filepath.Join(user, "_snapshots", fmt.Sprintf("emo.%d.db", *r.Snapshotted[0].Secs)) {
		t.Fatalf("scope user: %s", text)
	}
	r, text = g.snapshot(sid, map[string]any{})
	if len(r.Snapshotted) != 2 || r.Snapshotted[1].Table != "todo" || r.Snapshotted[1].Scope != "project" ||
		!strings.HasPrefix(r.Snapshotted[1].Path, filepath.Join(project, "_snapshots", "todo.")) {
		t.Fatalf("all: %s", text)
	}
	if n := countRows(t, r.Snapshotted[1].Path); n != 2 {
		t.Fatalf("todo snapshot holds %d rows", n)
	}
}
