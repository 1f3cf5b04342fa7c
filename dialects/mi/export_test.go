package mi

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpSyncBidirectionalWarnsOnce: mini-app-mcp accepts `sync:
// bidirectional`, warns when it opens the table and writes the dump files
// as write-only. The warning comes once per schema load, naming the table,
// and again when the schema changes.
func TestDumpSyncBidirectionalWarnsOnce(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	dir := t.TempDir()
	yaml := "table: notes\nfields:\n- name: title\n  type: string\ndump:\n  sync: bidirectional\n"
	if err := CreateTable(dir, "notes", []byte(yaml)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		info, err := ReadTable(dir, "notes")
		if err != nil {
			t.Fatal(err)
		}
		if info.Dump == nil || info.Dump.Sync != "bidirectional" {
			t.Fatalf("dump: %+v", info.Dump)
		}
	}
	if n := strings.Count(logs.String(), "bidirectional is not implemented"); n != 1 {
		t.Fatalf("want one warning, got %d:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "table=notes") {
		t.Fatalf("the warning does not name the table:\n%s", logs.String())
	}
	// A changed schema is a new load: it warns again.
	if err := os.WriteFile(filepath.Join(dir, "notes", "schema.yaml"), []byte(yaml+"title: Notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTable(dir, "notes"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "bidirectional is not implemented"); n != 2 {
		t.Fatalf("want a second warning after the change, got %d", n)
	}
	// write-only says nothing.
	if err := CreateTable(dir, "quiet", []byte("table: quiet\nfields: []\ndump:\n  sync: write-only\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTable(dir, "quiet"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "table=quiet") {
		t.Fatalf("write-only warned:\n%s", logs.String())
	}
}
