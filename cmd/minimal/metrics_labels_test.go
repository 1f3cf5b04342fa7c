package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/store"
)

// TestMetricsTenantLabels: GET /metrics answers anyone (no token), so by
// default it names no org or project: a database pool is labelled with its
// registration's id. The operator's opt-in (--metrics-tenant-labels or
// MINIMAL_METRICS_TENANT_LABELS=1) labels it org/project/type/schema; an
// environment value that is not a boolean is refused.
func TestMetricsTenantLabels(t *testing.T) {
	const org, project = "qzorgtenant", "qzprojsecret"
	const envLabels = "MINIMAL_METRICS_TENANT_LABELS" // as documented
	dsn, schema := pgTestSchema(t, "mlabels", `CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL); INSERT INTO items (name) VALUES ('a');`)
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.CreateOrg(ctx, org, org)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, o.ID, project, project)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := st.CreateSpace(ctx, p.ID, "main", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateIdentity(ctx, store.Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "ops", Kind: "user", Roles: []string{"admin"}, KeyType: "crud", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, errOut, code := cli(t, "db", "add", "--data-dir", dir, "--org", org, "--project", project, "--type", "pg", "--schema", schema, "--dsn", dsn)
	m := regexp.MustCompile(`\(id ([0-9a-f-]+)\)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("db add: %d %s %s", code, out, errOut)
	}
	id := m[1]
	tok, errOut, code := cli(t, "token", "mint", "--data-dir", dir, "--org", org, "--project", project, "--identity", "ops")
	if code != 0 {
		t.Fatalf("mint: %s", errOut)
	}
	tok = strings.TrimSpace(tok)

	// scrapeAfterRead opens the pool with a read and returns /metrics as an
	// anonymous client gets it.
	scrapeAfterRead := func(extra ...string) string {
		t.Helper()
		s := startServe(t, filepath.Clean(dir), extra...)
		defer s.terminate(t)
		registered := "http://" + s.addr + "/minimal/api/rest/auto/v1/" + org + "/" + project + "/pg/" + schema + "/items?ps=1&pg=0"
		if code, _, body := httpDo(t, "GET", registered, tok, ""); code != 200 {
			t.Fatalf("read: %d %s", code, body)
		}
		code, _, body := httpDo(t, "GET", "http://"+s.addr+"/metrics", "", "")
		if code != 200 {
			t.Fatalf("anonymous /metrics: %d", code)
		}
		return body
	}

	body := scrapeAfterRead()
	for _, name := range []string{org, project, "demo/demo"} {
		if strings.Contains(body, name) {
			t.Errorf("by default /metrics names %q:\n%s", name, grepLog(body, name))
		}
	}
	if !strings.Contains(body, `minimal_db_pool_max_connections{database="`+id+`"}`) {
		t.Errorf("by default the pool is not labelled with its id %s:\n%s", id, grepLog(body, "minimal_db_pool_max"))
	}

	named := `minimal_db_pool_max_connections{database="` + org + "/" + project + "/pg/" + schema + `"}`
	if body := scrapeAfterRead("--metrics-tenant-labels"); !strings.Contains(body, named) || strings.Contains(body, `database="`+id+`"`) {
		t.Errorf("--metrics-tenant-labels: want %s:\n%s", named, grepLog(body, "minimal_db_pool_max"))
	}
	t.Setenv(envLabels, "1")
	if body := scrapeAfterRead(); !strings.Contains(body, named) {
		t.Errorf("%s=1: want %s:\n%s", envLabels, named, grepLog(body, "minimal_db_pool_max"))
	}
	t.Setenv(envLabels, "sometimes")
	if _, errOut, code := cli(t, "serve", "--data-dir", dir, "--rest-addr", "127.0.0.1:0", "--mcp-addr", "127.0.0.1:0"); code != 2 || !strings.Contains(errOut, envLabels) {
		t.Errorf("%s=sometimes: exit %d, %s", envLabels, code, errOut)
	}
}
