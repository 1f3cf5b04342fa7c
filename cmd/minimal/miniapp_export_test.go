package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeExportRoots: `minimal serve` confines the files the MCP tools
// write to <data-dir>/exports, every --export-root and every entry of
// MINIMAL_EXPORT_ROOTS, each caller in <root>/<org>/<project>; a path
// anywhere else is refused naming those directories, and nothing is
// written there.
func TestServeExportRoots(t *testing.T) {
	dir, flagRoot, envRoot := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("MINIMAL_EXPORT_ROOTS", envRoot)
	s := startServe(t, dir, "--export-root", flagRoot)
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "export", "context": "export roots"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr {
		t.Fatalf("start: %s", text)
	}
	materialize := func(dest string) (string, bool) {
		return toolText(t, s.mcpAddr, agent, started.SessionID, "row_materialize", map[string]any{"table": "notes",
			"selector": map[string]any{"type": "by_filter", "filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}},
			"fields":   map[string]any{"mode": "all"}, "format": "json", "dest": dest, "concat": true})
	}
	bases := []string{filepath.Join(dir, "exports", "demo", "demo"), filepath.Join(flagRoot, "demo", "demo"), filepath.Join(envRoot, "demo", "demo")}
	for _, dest := range []string{"a/all.json", filepath.Join(bases[0], "b.json"), filepath.Join(bases[1], "c.json"), filepath.Join(bases[2], "d.json")} {
		if text, isErr := materialize(dest); isErr || !strings.Contains(text, `"count":1`) {
			t.Fatalf("%s: %s", dest, text)
		}
	}
	for _, f := range []string{filepath.Join(bases[0], "a", "all.json"), filepath.Join(bases[0], "b.json"), filepath.Join(bases[1], "c.json"), filepath.Join(bases[2], "d.json")} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), `"title"`) {
			t.Fatalf("%s: %q %v", f, b, err)
		}
	}
	outside := filepath.Join(t.TempDir(), "out")
	for _, dest := range []string{filepath.Join(flagRoot, "x.json"), filepath.Join(outside, "x.json"), filepath.Join(dir, "master.key")} {
		text, isErr := materialize(dest)
		want := "path not allowed '" + filepath.Dir(dest) + "': outside the export roots; files may be written only under " + strings.Join(bases, ", ")
		if !isErr || text != want {
			t.Fatalf("%s: %v %q\nwant %q", dest, isErr, text, want)
		}
	}
	if _, err := os.Stat(filepath.Join(flagRoot, "x.json")); !os.IsNotExist(err) {
		t.Fatalf("written at the root itself: %v", err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("written outside: %v", err)
	}
}
