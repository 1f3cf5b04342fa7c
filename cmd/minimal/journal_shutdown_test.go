package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestJournalSurvivesCleanShutdown: read-only MCP calls, whose journal
// entries the gateway writes in batches after answering, are all in the
// journal — each with its outcome — when another process reads it after a
// SIGTERM that comes right after the last answer (the last batch still
// waiting in memory).
func TestJournalSurvivesCleanShutdown(t *testing.T) {
	t.Setenv("MINIMAL_LOG_LEVEL", "warn")
	dir := t.TempDir()
	s := startQuietServe(t, dir)
	agent := readToken(t, filepath.Join(dir, "agent.token"))
	text, isErr := toolText(t, s.mcpAddr, agent, "", "start_ai_session", map[string]any{"name": "shutdown", "context": "journal on SIGTERM"})
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(text), &started); err != nil || isErr || started.SessionID == "" {
		t.Fatalf("start: %s", text)
	}
	sid := started.SessionID

	const calls = 300
	var wg sync.WaitGroup
	errs := make(chan string, calls)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < calls; i += 16 {
				// Every tenth call is refused (an unknown column): its
				// outcome is journaled too.
				q := map[string]any{"oy": "title.as"}
				if i%10 == 0 {
					q = map[string]any{"nope": "eq.1"}
				}
				text, isErr := toolText(t, s.mcpAddr, agent, sid, "auto_read_rows", map[string]any{"type": "mi", "schema": "app", "table": "notes",
					"page_size": 10, "page_number": 0, "query": q})
				if isErr != (i%10 == 0) {
					errs <- fmt.Sprintf("call %d: isError %v: %s", i, isErr, text)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	s.terminate(t)

	out, errOut, code := cli(t, "session", "journal", "--data-dir", dir, "--json", sid)
	var v struct {
		Calls []struct {
			Seq           int64
			Tool, Outcome string
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("session journal: %d %s %s", code, out, errOut)
	}
	outcomes := map[string]int{}
	for k, c := range v.Calls {
		if c.Seq != int64(k+1) || c.Tool != "auto_read_rows" {
			t.Fatalf("entry %d: %+v", k, c)
		}
		outcomes[c.Outcome]++
	}
	if len(v.Calls) != calls || outcomes["ok"] != calls-calls/10 || outcomes["INVALID"] != calls/10 {
		t.Fatalf("%d entries after a clean shutdown, outcomes %v; want %d, %d ok and %d INVALID", len(v.Calls), outcomes, calls, calls-calls/10, calls/10)
	}
}
