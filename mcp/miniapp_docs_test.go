package mcp_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/store"
)

// TestMiniAppDocumentsGateway: on the gateway a row is stored as given (a
// caller without a column limit writes keys the schema does not name,
// explicit nulls and 5.0), and a caller whose template lists columns reads
// only those fields of it, cannot write any other key (refused with the
// existing error over real HTTP, nothing written) and leaves the keys it
// cannot see as they are when it updates (merge, replace) or restores the
// row.
func TestMiniAppDocumentsGateway(t *testing.T) {
	g := newGateway(t, time.Minute)
	ctx := context.Background()
	pol := store.Policy{
		Templates: []store.Template{{Name: "titles", Rules: []store.Rule{{Object: "mi/app/notes",
			Actions: []string{"read", "create", "update"}, Columns: []string{"id", "title", "created_at", "updated_at"}}}}},
		Bindings: []store.Binding{{Role: "titles", Templates: []string{"titles"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	_, narrow := g.identity("narrow", "mcp", []string{"titles"}, nil, auth.MintOptions{})
	nsid := g.start(narrow)
	g.waitPolicy(narrow, nsid)
	sid := g.start(g.agent)

	dataOf := func(what, text string, isErr bool) string {
		t.Helper()
		var r map[string]json.RawMessage
		if isErr || json.Unmarshal([]byte(text), &r) != nil || r["data"] == nil {
			t.Fatalf("%s: %v %s", what, isErr, text)
		}
		return string(r["data"])
	}
	stored := func(id string) string {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(g.dir, "mini-app", "app", "notes", "notes.db")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var data string
		if err := db.QueryRow(`SELECT data FROM rows WHERE id = ?`, id).Scan(&data); err != nil {
			t.Fatal(err)
		}
		return data
	}

	// The agent has no column limit: the row is stored and answered as given.
	const full = `{"body":"secret","extra":null,"score":5.0,"title":"t"}`
	text, isErr := g.miniTool(sid, "create", map[string]any{"table": "notes", "data": map[string]any{
		"title": "t", "body": "secret", "score": json.Number("5.0"), "extra": nil}})
	if got := dataOf("create", text, isErr); got != full {
		t.Fatalf("create answered %s, want %s", got, full)
	}
	var rec struct{ ID string }
	_ = json.Unmarshal([]byte(text), &rec)
	id := rec.ID
	if got := stored(id); got != full {
		t.Fatalf("stored %s, want %s", got, full)
	}
	text, isErr = g.miniTool(sid, "get", map[string]any{"table": "notes", "id": id})
	if got := dataOf("agent get", text, isErr); got != full {
		t.Fatalf("agent get %s", got)
	}

	// The narrow caller reads its fields only.
	text, isErr = g.miniToolAs(narrow, nsid, "get", map[string]any{"table": "notes", "id": id})
	if got := dataOf("narrow get", text, isErr); got != `{"title":"t"}` {
		t.Fatalf("narrow get %s", got)
	}
	text, isErr = g.miniToolAs(narrow, nsid, "list", map[string]any{"table": "notes", "filter": map[string]any{"type": "eq", "field": "title", "value": "t"}})
	if isErr || text != `[{"id":"`+id+`","data":{"title":"t"},`+text[strings.Index(text, `"created_at"`):] {
		t.Fatalf("narrow list %s", text)
	}
	// Its create answers its fields (not the stored document whole).
	text, isErr = g.miniToolAs(narrow, nsid, "create", map[string]any{"table": "notes", "data": map[string]any{"title": "mine"}})
	if got := dataOf("narrow create", text, isErr); got != `{"title":"mine"}` {
		t.Fatalf("narrow create %s", got)
	}
	// Its merge and replace leave the keys it cannot see.
	text, isErr = g.miniToolAs(narrow, nsid, "update", map[string]any{"table": "notes", "id": id, "data": map[string]any{"title": "t2"}})
	if got := dataOf("narrow merge", text, isErr); got != `{"title":"t2"}` || stored(id) != `{"body":"secret","extra":null,"score":5.0,"title":"t2"}` {
		t.Fatalf("narrow merge answered %s, stored %s", got, stored(id))
	}
	text, isErr = g.miniToolAs(narrow, nsid, "update", map[string]any{"table": "notes", "id": id, "mode": "replace", "data": map[string]any{"title": "t3"}})
	if got := dataOf("narrow replace", text, isErr); got != `{"title":"t3"}` || stored(id) != `{"body":"secret","extra":null,"score":5.0,"title":"t3"}` {
		t.Fatalf("narrow replace answered %s, stored %s", got, stored(id))
	}
	// Its restore brings back the fields it sees; the others stay.
	text, isErr = g.miniToolAs(narrow, nsid, "row_restore", map[string]any{"table": "notes", "id": id, "at_unix_secs": time.Now().Unix() + 5})
	if got := dataOf("narrow restore", text, isErr); got != `{"title":"t3"}` || stored(id) != `{"body":"secret","extra":null,"score":5.0,"title":"t3"}` {
		t.Fatalf("narrow restore answered %s, stored %s", got, stored(id))
	}

	// Refusals over HTTP: a key the schema does not name, and a field it
	// cannot see; nothing is written.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"create", map[string]any{"table": "notes", "data": map[string]any{"title": "x", "extra": 1}},
			"validation error on field 'extra': unknown field — only schema-registered fields are stored by the gateway"},
		{"create", map[string]any{"table": "notes", "data": map[string]any{"title": "x", "id": "y"}},
			"validation error on field 'id': unknown field — only schema-registered fields are stored by the gateway"},
		{"update", map[string]any{"table": "notes", "id": id, "data": map[string]any{"score": 6}},
			"validation error on field 'score': unknown field — only schema-registered fields are stored by the gateway"},
		{"update", map[string]any{"table": "notes", "id": id, "mode": "replace", "data": map[string]any{"title": "y", "body": "b"}},
			"validation error on field 'body': unknown field — only schema-registered fields are stored by the gateway"},
	} {
		if text, isErr := g.miniToolAs(narrow, nsid, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v: %v %q, want %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	if got := stored(id); got != `{"body":"secret","extra":null,"score":5.0,"title":"t3"}` {
		t.Fatalf("a refused call wrote: %s", got)
	}
	text, _ = g.miniTool(sid, "list", map[string]any{"table": "notes", "filter": map[string]any{"type": "eq", "field": "title", "value": "x"}})
	if text != "[]" {
		t.Fatalf("a refused create wrote: %s", text)
	}
	// The agent still sees the whole row.
	text, isErr = g.miniTool(sid, "get", map[string]any{"table": "notes", "id": id})
	if got := dataOf("agent get after", text, isErr); got != `{"body":"secret","extra":null,"score":5.0,"title":"t3"}` {
		t.Fatalf("agent get after %s", got)
	}
}
