package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/store"
)

// TestFileCapabilityGates: the mini-app tools that act on a table's files
// reach the mi source's capabilities only through the engine's gated,
// audited entry points, one family at a time — the snapshot (read on
// every row and column), row history (row_restore: read the history,
// write through Execute), the schema changes (schema action plus a CRUD
// right) and the alias store (update on the table an alias reads). Each
// refuses under a key_type without its right, under a lock, and for a role
// without it, with REST's message for the same right, before any file is
// touched; each refusal and each call that runs is in the audit log (the
// batch's gates are TestSchemaBatchGates'). A restored row comes back
// under its old id, carried by the plan.
func TestFileCapabilityGates(t *testing.T) {
	g, sid, root := schemaFixture(t)
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{
			{Name: "view", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"read"}}}},
			{Name: "no-read", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read"}, Effect: store.EffectDeny}}},
		},
		Bindings: []store.Binding{{Role: "viewer", Templates: []string{"view"}}, {Role: "unread", Templates: []string{"no-read"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, ro := g.identity("ro", "mcp", []string{"admin"}, nil, auth.MintOptions{KeyType: "-r--"})
	_, wo := g.identity("wo", "mcp", []string{"admin"}, nil, auth.MintOptions{KeyType: "c-ud"})
	_, viewer := g.identity("viewer", "mcp", []string{"viewer"}, nil, auth.MintOptions{})
	_, unread := g.identity("unread", "mcp", []string{"admin", "unread"}, nil, auth.MintOptions{})
	tokens := map[string]string{"ro": ro, "wo": wo, "viewer": viewer, "unread": unread, "agent": g.agent}
	sessions := map[string]string{"agent": sid}
	for name, tok := range tokens {
		if name != "agent" {
			sessions[name] = g.start(tok)
		}
	}
	g.waitPolicy(viewer, sessions["viewer"])

	// REST's refusals are the yardstick.
	restMsg := func(method, token string, body any) string {
		t.Helper()
		path := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes"
		switch method {
		case "GET":
			path += "?title=eq.nothing&ps=10&pg=1"
		case "PUT", "DELETE":
			path += "?title=eq.nothing"
		}
		r := g.restDo(method, path, token, body)
		if r.status != 403 {
			t.Fatalf("REST %s: %d %s", method, r.status, r.raw)
		}
		_, msg := r.httpError(t)
		return msg
	}
	refusal := "insufficient permissions for this operation on this table, got [%s]"
	const notes = "mi/app/notes"
	for _, c := range []struct{ method, token, want string }{
		{"POST", ro, fmt.Sprintf(refusal, "admin")},
		{"GET", wo, fmt.Sprintf(refusal, "admin")},
		{"POST", viewer, fmt.Sprintf(refusal, "viewer")},
	} {
		if got := restMsg(c.method, c.token, map[string]any{"title": "x"}); got != c.want {
			t.Fatalf("REST %s: %q, want %q", c.method, got, c.want)
		}
	}

	// audited waits for one more audit entry of who's action on object
	// with this outcome (and message) than it saw before; more is a
	// failure too. The REST refusals above are the first of theirs.
	counts := map[string]int{
		"ro " + notes + " create FORBIDDEN " + fmt.Sprintf(refusal, "admin"):      1,
		"wo " + notes + " read FORBIDDEN " + fmt.Sprintf(refusal, "admin"):        1,
		"viewer " + notes + " create FORBIDDEN " + fmt.Sprintf(refusal, "viewer"): 1,
	}
	audited := func(who, object, action, outcome, msg string) {
		t.Helper()
		k := who + " " + object + " " + action + " " + outcome + " " + msg
		counts[k]++
		var got []store.AuditEntry
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			es, err := g.st.AuditLog(ctx, g.proj.ID, store.AuditFilter{Identity: who, Object: object, Action: action, Limit: store.MaxAuditLimit})
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, e := range es {
				if e.Outcome == outcome && (msg == "" || e.Message == msg) {
					got = append(got, e)
				}
			}
			if len(got) >= counts[k] || time.Now().After(deadline) {
				break
			}
		}
		if len(got) != counts[k] {
			t.Fatalf("audit of %s: %d entries, want %d: %+v", k, len(got), counts[k], got)
		}
	}
	refused := func(who, tool string, args map[string]any, want string) {
		t.Helper()
		g.refused(tokens[who], sessions[who], tool, args, want)
	}

	// The snapshot copies the whole file: read on every row and column.
	snap := map[string]any{"table": "notes"}
	refused("wo", "data_snapshot", snap, fmt.Sprintf(refusal, "admin"))
	audited("wo", notes, "read", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("unread", "data_snapshot", snap, fmt.Sprintf(refusal, "admin, unread"))
	audited("unread", notes, "read", "FORBIDDEN", fmt.Sprintf(refusal, "admin, unread"))
	if _, err := os.Stat(filepath.Join(g.dir, "exports")); !os.IsNotExist(err) {
		t.Fatalf("a refused snapshot made the export directory: %v", err)
	}
	g.must(g.agent, sid, "data_snapshot", snap)
	audited("agent", notes, "read", "ok", "")

	// Row history: row_restore reads it (read), then writes through
	// Execute (create), each gated and audited.
	var rec struct{ ID string }
	if err := json.Unmarshal([]byte(g.must(g.agent, sid, "create", map[string]any{"table": "notes", "data": map[string]any{"title": "gone"}})), &rec); err != nil || len(rec.ID) != 36 {
		t.Fatalf("create: %v %+v", err, rec)
	}
	audited("agent", notes, "create", "ok", "")
	g.must(g.agent, sid, "delete", map[string]any{"table": "notes", "id": rec.ID})
	restore := map[string]any{"table": "notes", "id": rec.ID, "at_unix_secs": time.Now().Unix() + 5}
	refused("ro", "row_restore", restore, fmt.Sprintf(refusal, "admin"))
	counts["ro "+notes+" read ok "]++      // the current row was read…
	audited("ro", notes, "read", "ok", "") // …and its history
	audited("ro", notes, "create", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("viewer", "row_restore", restore, fmt.Sprintf(refusal, "viewer"))
	audited("viewer", notes, "create", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))
	refused("unread", "row_restore", restore, fmt.Sprintf(refusal, "admin, unread"))
	audited("unread", notes, "read", "FORBIDDEN", fmt.Sprintf(refusal, "admin, unread"))
	if text, isErr := g.miniTool(sid, "get", map[string]any{"table": "notes", "id": rec.ID}); !isErr {
		t.Fatalf("the refused restores brought the row back: %s", text)
	}
	var back struct{ ID string }
	if err := json.Unmarshal([]byte(g.must(g.agent, sid, "row_restore", restore)), &back); err != nil || back.ID != rec.ID {
		t.Fatalf("restored row: %v %+v, want id %s", err, back, rec.ID)
	}
	audited("agent", notes, "create", "ok", "")

	// Schema changes: the schema action and the CRUD right.
	def := func(table string) map[string]any {
		return map[string]any{"table": table, "scope": "project", "fields": []any{field("title", "string", true), field("body", "string", false)}}
	}
	refused("ro", "schema_create", def("fresh"), fmt.Sprintf("schema_create needs the create right on mi/app/fresh (key_type, locks and templates), got [admin]"))
	audited("ro", "mi/app/fresh", "write", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("ro", "schema_update", def("notes"), "schema_update needs the update right on mi/app/notes (key_type, locks and templates), got [admin]")
	audited("ro", notes, "write", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("viewer", "schema_delete", map[string]any{"table": "notes", "scope": "project"},
		"schema_delete changes table definitions and needs role admin or the schema action on mi/app/notes, got [viewer]")
	audited("viewer", notes, "write", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))
	if _, err := os.Stat(filepath.Join(root, "fresh")); !os.IsNotExist(err) {
		t.Fatalf("a refused schema_create made %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "_backup")); !os.IsNotExist(err) {
		t.Fatalf("a refused schema change wrote a backup: %v", err)
	}
	g.must(g.agent, sid, "schema_create", def("fresh"))
	audited("agent", "mi/app/fresh", "write", "ok", "")
	g.must(g.agent, sid, "schema_update", def("fresh"))
	audited("agent", "mi/app/fresh", "write", "ok", "")
	g.must(g.agent, sid, "schema_delete", map[string]any{"table": "fresh", "scope": "project"})
	audited("agent", "mi/app/fresh", "write", "ok", "")

	// The alias store: storing or removing an alias is a write on the
	// table it reads; reading the store is a read of the database.
	alias := map[string]any{"name": "titled", "table": "notes", "filter": map[string]any{"type": "like", "field": "title", "pattern": "%"}}
	refused("ro", "alias_create", alias, fmt.Sprintf(refusal, "admin"))
	audited("ro", notes, "write", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("viewer", "alias_create", alias, fmt.Sprintf(refusal, "viewer"))
	audited("viewer", notes, "write", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))
	if _, err := os.Stat(filepath.Join(root, "_global.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused alias_create made the alias store: %v", err)
	}
	g.must(g.agent, sid, "alias_create", alias)
	audited("agent", notes, "write", "ok", "")
	if got := g.must(viewer, sessions["viewer"], "alias_list", map[string]any{}); !json.Valid([]byte(got)) || got == "[]" {
		t.Fatalf("alias_list for a viewer: %s", got)
	}
	audited("viewer", "mi/app", "read", "ok", "")
	refused("viewer", "alias_delete", map[string]any{"name": "titled"}, fmt.Sprintf(refusal, "viewer"))
	audited("viewer", notes, "write", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))

	// The row family (create, get, list, update, delete) goes through
	// Execute: the same refusals and audit entries as REST.
	var row struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(g.must(g.agent, sid, "create", map[string]any{"table": "notes", "data": map[string]any{"title": "kept"}})), &row); err != nil || row.ID == "" {
		t.Fatalf("create: %v %+v", err, row)
	}
	refused("ro", "create", map[string]any{"table": "notes", "data": map[string]any{"title": "x"}}, fmt.Sprintf(refusal, "admin"))
	audited("ro", notes, "create", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("viewer", "create", map[string]any{"table": "notes", "data": map[string]any{"title": "x"}}, fmt.Sprintf(refusal, "viewer"))
	audited("viewer", notes, "create", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))
	refused("wo", "list", map[string]any{"table": "notes"}, fmt.Sprintf(refusal, "admin"))
	audited("wo", notes, "read", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("ro", "update", map[string]any{"table": "notes", "id": row.ID, "data": map[string]any{"title": "y"}}, fmt.Sprintf(refusal, "admin"))
	audited("ro", notes, "update", "FORBIDDEN", fmt.Sprintf(refusal, "admin"))
	refused("viewer", "delete", map[string]any{"table": "notes", "id": row.ID}, fmt.Sprintf(refusal, "viewer"))
	audited("viewer", notes, "delete", "FORBIDDEN", fmt.Sprintf(refusal, "viewer"))

	// A lock refuses each family as it refuses REST: -r-- for the writes…
	lock := func(mask, probeMethod string) string {
		t.Helper()
		if _, err := g.st.AddLock(ctx, store.Lock{ProjectID: g.proj.ID, Pattern: notes, Mask: mask}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			r := g.restDo(probeMethod, "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?title=eq.nothing&ps=10&pg=1", g.admin, map[string]any{"body": "x"})
			if r.status == 403 {
				_, msg := r.httpError(t)
				return msg
			}
			if time.Now().After(deadline) {
				t.Fatalf("the lock never reached the engine: %d %s", r.status, r.raw)
			}
		}
	}
	unlock := func() {
		t.Helper()
		if err := g.st.RemoveLock(ctx, g.proj.ID, notes); err != nil {
			t.Fatal(err)
		}
	}
	locked := lock("-r--", "PUT")
	if locked != "this table is locked for update, got [admin]" {
		t.Fatalf("REST under the lock: %q", locked)
	}
	refused("agent", "schema_update", def("notes"), "schema_update needs the update right on mi/app/notes (key_type, locks and templates), got [admin]")
	audited("agent", notes, "write", "FORBIDDEN", locked)
	refused("agent", "alias_delete", map[string]any{"name": "titled"}, locked)
	audited("agent", notes, "write", "FORBIDDEN", locked)
	refused("agent", "update", map[string]any{"table": "notes", "id": row.ID, "data": map[string]any{"title": "y"}}, locked)
	audited("agent", notes, "update", "FORBIDDEN", locked)
	lockedDelete := "this table is locked for delete, got [admin]"
	refused("agent", "delete", map[string]any{"table": "notes", "id": row.ID}, lockedDelete)
	audited("agent", notes, "delete", "FORBIDDEN", lockedDelete)
	unlock()
	// …and c-ud for the reads.
	locked = lock("c-ud", "GET")
	if locked != "this table is locked for read, got [admin]" {
		t.Fatalf("REST under the lock: %q", locked)
	}
	refused("agent", "data_snapshot", snap, locked)
	audited("agent", notes, "read", "FORBIDDEN", locked)
	refused("agent", "get", map[string]any{"table": "notes", "id": row.ID}, locked)
	audited("agent", notes, "read", "FORBIDDEN", locked)
	unlock()
}
