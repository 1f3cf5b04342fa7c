package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects/mi"
)

// TestMiniAppDump: a table with a dump section gets <dir>/<id>.md after
// create, update, content edits and row_restore, "# title\n\nbody\n" from
// the fields the section names; delete keeps the file; a table without the
// section writes none.
func TestMiniAppDump(t *testing.T) {
	g := newGateway(t, time.Hour)
	dir := filepath.Join(g.dir, "mini-app", "app")
	dumps := t.TempDir()
	yaml := "table: journal\nfields:\n  - name: heading\n    type: string\n    required: true\n  - name: text\n    type: string\n" +
		"dump:\n  dir: " + dumps + "\n  title_field: heading\n  body_field: text\n"
	if err := mi.CreateTable(dir, "journal", []byte(yaml)); err != nil {
		t.Fatal(err)
	}
	sid := g.start(g.agent)
	ok := func(name string, args map[string]any) string {
		t.Helper()
		text, isErr := g.miniTool(sid, name, args)
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	var rec struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(ok("create", map[string]any{"table": "journal", "data": map[string]any{"heading": "Day 1", "text": "rain"}})), &rec); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dumps, rec.ID+".md")
	want := func(step, content string) {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil || string(b) != content {
			t.Fatalf("%s: dump %q, %v; want %q", step, b, err, content)
		}
	}
	want("create", "# Day 1\n\nrain\n")
	ok("update", map[string]any{"table": "journal", "id": rec.ID, "data": map[string]any{"text": "sun"}})
	want("update", "# Day 1\n\nsun\n")
	ok("content_insert", map[string]any{"table": "journal", "id": rec.ID, "field": "text", "line": 1, "content": "wind"})
	want("content_insert", "# Day 1\n\nsun\nwind\n")
	// The calls share a second, so a restore finds the newest entry; it
	// writes the file again.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	ok("row_restore", map[string]any{"table": "journal", "id": rec.ID, "at_unix_secs": time.Now().Unix() + 1})
	want("row_restore", "# Day 1\n\nsun\nwind\n")
	ok("delete", map[string]any{"table": "journal", "id": rec.ID})
	want("delete keeps it", "# Day 1\n\nsun\nwind\n")
	if entries, _ := os.ReadDir(dumps); len(entries) != 1 {
		t.Fatalf("dump dir holds %d entries, want the one file", len(entries))
	}

	// The bootstrap's notes table has no dump section: nothing is written
	// under the working directory.
	cwd, _ := os.Getwd()
	ok("create", map[string]any{"table": "notes", "data": map[string]any{"title": "no dump"}})
	if _, err := os.Stat(filepath.Join(cwd, ".mini-app")); !os.IsNotExist(err) {
		t.Fatalf("a table without dump wrote under %s: %v", cwd, err)
	}
}
