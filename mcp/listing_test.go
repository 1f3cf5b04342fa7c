package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/store"
)

// The token budgets of tools/list (issue 13), counted with cl100k_base on
// the tools array as the gateway sends it; make bench prints the same
// figures.
const (
	adminListBudget    = 3000
	readOnlyListBudget = 1500
)

// listing returns the names of the tools the token lists and the cl100k
// tokens of the tools array.
func (g *gateway) listing(token string) ([]string, int) {
	g.t.Helper()
	var list struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(g.call(token, "", "tools/list", nil).raw, &list); err != nil {
		g.t.Fatal(err)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(list.Result.Tools, &tools); err != nil {
		g.t.Fatal(err)
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	sort.Strings(names)
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		g.t.Fatal(err)
	}
	n, err := enc.Count(string(list.Result.Tools))
	if err != nil {
		g.t.Fatal(err)
	}
	return names, n
}

// TestToolsListPerRole: in a project with pg and mi databases, tools/list
// shows each caller exactly the tools it could succeed with — mini-app
// tools only with a right on an mi database, the file-writing ones only to
// an admin, the schema ones only with the schema action, write tools only
// with a write right — within the token budgets; a project without an mi
// database lists no mini-app tool, even to its admin.
func TestToolsListPerRole(t *testing.T) {
	f := newPGFixture(t)
	ctx := context.Background()
	if err := f.st.ReplacePolicy(ctx, f.proj.ID, store.Policy{
		Templates: []store.Template{
			{Name: "read-all", Rules: []store.Rule{{Object: "pg", Actions: []string{"read"}}, {Object: "mi", Actions: []string{"read"}}}},
			{Name: "pg-write", Rules: []store.Rule{{Object: "pg/" + f.schema, Actions: []string{"create", "read", "update", "delete"}}}},
			{Name: "notes-edit", Rules: []store.Rule{{Object: "mi/app/notes", Actions: []string{"read", "update"}}}},
			{Name: "mi-schema", Rules: []store.Rule{{Object: "mi/app/*", Actions: []string{"create", "schema"}}}},
		},
		Bindings: []store.Binding{
			{Role: "reader", Templates: []string{"read-all"}},
			{Role: "pg-writer", Templates: []string{"pg-write"}},
			{Role: "notes-editor", Templates: []string{"notes-edit"}},
			{Role: "mi-designer", Templates: []string{"mi-schema"}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	session := []string{"end_ai_session", "help", "meta_describe_table", "meta_list_databases", "meta_list_tables", "ping", "start_ai_session"}
	writes := []string{"auto_delete_rows", "auto_insert_rows", "auto_read_rows", "auto_update_rows"}
	miniRead := []string{"alias_list", "alias_run", "content_view", "get", "info", "list", "query_aggregate"}
	miniUpdate := []string{"alias_create", "alias_delete", "content_insert", "content_replace", "row_restore", "update"}
	all := func(lists ...[]string) []string {
		var out []string
		for _, l := range lists {
			out = append(out, l...)
		}
		sort.Strings(out)
		return out
	}
	_, reader := f.identity("reader-bot", "mcp", []string{"reader"}, nil, auth.MintOptions{})
	_, writer := f.identity("pg-writer-bot", "mcp", []string{"pg-writer"}, nil, auth.MintOptions{})
	_, editor := f.identity("editor-bot", "mcp", []string{"notes-editor"}, nil, auth.MintOptions{})
	_, designer := f.identity("designer-bot", "mcp", []string{"mi-designer"}, nil, auth.MintOptions{})
	_, none := f.identity("no-rights-bot", "mcp", []string{"nothing"}, nil, auth.MintOptions{})
	for _, c := range []struct {
		who    string
		token  string
		want   []string
		budget int
	}{
		// The admin: every tool but the custom API ones (none is defined)
		// and reload (drop-in mode's).
		{"admin", f.agent, all(session, writes, miniRead, miniUpdate,
			[]string{"create", "delete", "data_snapshot", "row_materialize", "schema_batch", "schema_create", "schema_delete", "schema_update"}), adminListBudget},
		// Read on every database: the read tools, the mini-app ones too,
		// but not the file-writing ones (admin only).
		{"read-only", reader, all(session, []string{"auto_read_rows"}, miniRead), readOnlyListBudget},
		// Writes on pg only: no mini-app tool.
		{"pg writer", writer, all(session, writes), readOnlyListBudget},
		// Read and update on one mi table: the mini-app tools of those
		// rights, neither create nor delete nor any schema tool.
		{"notes editor", editor, all(session, []string{"auto_read_rows", "auto_update_rows"}, miniRead, miniUpdate), 0},
		// create and the schema action on mi: schema_create, not info
		// (which answers the fields: read) nor the
		// update-based schema tools.
		{"mi designer", designer, all(session, []string{"auto_insert_rows", "create", "schema_create"}), 0},
		{"no rights", none, session, 0},
	} {
		var got []string
		var tokens int
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if got, tokens = f.listing(c.token); slices.Equal(got, c.want) || time.Now().After(deadline) {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s lists %v, want %v", c.who, got, c.want)
		}
		t.Logf("%s: %d tools, %d tokens", c.who, len(got), tokens)
		if c.budget > 0 && tokens > c.budget {
			t.Errorf("%s: tools/list is %d tokens, budget %d", c.who, tokens, c.budget)
		}
		// help lists the same tools.
		sid := f.start(c.token)
		var helped []string
		for _, e := range f.tool(c.token, sid, "help", map[string]any{}).ok(t).value(t).([]any) {
			helped = append(helped, e.(map[string]any)["name"].(string))
		}
		if sort.Strings(helped); !slices.Equal(helped, c.want) {
			t.Errorf("%s: help lists %v", c.who, helped)
		}
	}

	// A project without an mi database: its admin lists no mini-app tool.
	org, err := f.st.Org(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := f.st.CreateProject(ctx, org.ID, "nomi", "nomi")
	if err != nil {
		t.Fatal(err)
	}
	space, err := f.st.CreateSpace(ctx, proj.ID, "main", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AddDatabase(ctx, store.Database{ProjectID: proj.ID, Type: "pg", Schema: f.schema, DSN: dialecttest.DSN(t, "MINIMAL_TEST_PG_DSN")}); err != nil {
		t.Fatal(err)
	}
	id, err := f.st.CreateIdentity(ctx, store.Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: "admin-bot", Kind: "mcp",
		Roles: []string{"admin"}, KeyType: "crud", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := auth.Mint(ctx, f.st, f.key, id, auth.MintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, tokens := f.listing(tok); !slices.Equal(got, all(session, writes)) {
		t.Errorf("admin of a project without mi lists %v", got)
	} else {
		t.Logf("admin without mi: %d tools, %d tokens", len(got), tokens)
	}
}
