//go:build unix

package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataDirPrivate starts a gateway on a fresh data dir with a wide-open
// umask (000), writes through every road that leaves files there — REST
// inserts, the CLI, AI sessions, schema_create, schema_update and
// schema_batch (with their backups), data_snapshot, row_materialize — and
// walks the data dir, while the server runs and after it stops: every file
// is 0600 and every directory 0700, SQLite's -wal and -shm files included.
func TestDataDirPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	old := syscall.Umask(0) // the server inherits it
	s := startServer(t, dir)
	syscall.Umask(old)
	admin := readToken(t, filepath.Join(dir, "admin.token"))
	agent := readToken(t, filepath.Join(dir, "agent.token"))

	// REST writes to the sample table and the control plane.
	if code, _, body := httpDo(t, "POST", "http://"+s.addr+"/minimal/api/rest/auto/v1/demo/demo/mi/app/notes", admin, `{"title":"private","body":"x"}`); code != 201 {
		t.Fatalf("insert: %d %s", code, body)
	}
	if _, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--identity", "admin"); code != 0 {
		t.Fatalf("mint: %s", errOut)
	}

	// MCP: a session, a new table, its schema changed twice (backups), a
	// snapshot and materialized rows.
	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "modes", "context": "file modes"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr {
		t.Fatalf("start: %s", text)
	}
	sid := started.SessionID
	field := func(name string) map[string]any {
		return map[string]any{"name": name, "type": "string", "required": false}
	}
	must := func(name string, args map[string]any) string {
		t.Helper()
		text, isErr := toolText(t, s.mcpAddr, agent, sid, name, args)
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	must("schema_create", map[string]any{"table": "memo", "scope": "project", "fields": []any{field("a")}})
	must("create", map[string]any{"table": "memo", "data": map[string]any{"a": "1"}})
	must("schema_update", map[string]any{"table": "memo", "scope": "project", "fields": []any{field("a"), field("b")}})
	must("schema_batch", map[string]any{"ops": []any{map[string]any{"op": "schema_update", "table": "memo", "scope": "project",
		"fields": []any{field("a"), field("b"), field("c")}}}})
	must("data_snapshot", map[string]any{"table": "notes"})
	must("row_materialize", map[string]any{"table": "notes", "selector": map[string]any{"type": "by_filter", "limit": 10,
		"filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}}, "fields": map[string]any{"mode": "all"},
		"format": "json", "dest": filepath.Join(dir, "exports", "demo", "demo", "rows")})

	walk := func(when string) {
		t.Helper()
		var files []string
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			} else {
				files = append(files, rel)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s: %s has mode %o, want %o", when, rel, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(files, "\n")
		for _, want := range []string{"control.db", "master.key", "admin.token", "notes.db", "memo.db", "schema.yaml", "_backup", ".json"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no file %q was written:\n%s", when, want, all)
			}
		}
		t.Logf("%s: %d files", when, len(files))
	}
	walk("while serving")
	for _, f := range []string{"control.db-wal", "control.db-shm"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("while serving: %v", err)
		}
	}
	s.stop(t)
	walk("after stopping")
}
