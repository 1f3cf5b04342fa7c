package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// TestConstraintErrorsNameNothingHidden attacks the database's own error
// messages as a side door: a clerk whose template shows kids without its
// vault_* columns, and not the vault_parents table at all, makes writes the
// table's NOT NULL, foreign key and check constraints refuse. Each answer
// is a 400 that tells the rule, and not one of them spells a hidden name
// (the databases' messages say "vault_secret", "vault_link",
// "vault_parents", "kids_vault_limit_check"). A column the clerk may see is
// named where the driver says which one it is (PostgreSQL).
func TestConstraintErrorsNameNothingHidden(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	name := g.dialectDBs("viol", map[string][]string{
		"pg": {
			`CREATE TABLE {db}.vault_parents (id int PRIMARY KEY)`,
			`CREATE TABLE {db}.kids (id serial PRIMARY KEY, name text NOT NULL, qty int, parent_id int,
				vault_code text NOT NULL DEFAULT 'v', vault_limit int NOT NULL DEFAULT 10,
				CONSTRAINT vault_link FOREIGN KEY (parent_id) REFERENCES {db}.vault_parents(id),
				CONSTRAINT kids_vault_limit_check CHECK (qty IS NULL OR qty < vault_limit))`,
			`CREATE TABLE {db}.kids2 (id serial PRIMARY KEY, name text, vault_secret text NOT NULL)`,
		},
		"ma": {
			`CREATE TABLE {db}.vault_parents (id int PRIMARY KEY) ENGINE=InnoDB`,
			`CREATE TABLE {db}.kids (id int AUTO_INCREMENT PRIMARY KEY, name varchar(40) NOT NULL, qty int NULL, parent_id int NULL,
				vault_code varchar(10) NOT NULL DEFAULT 'v', vault_limit int NOT NULL DEFAULT 10,
				CONSTRAINT vault_link FOREIGN KEY (parent_id) REFERENCES {db}.vault_parents(id),
				CONSTRAINT kids_vault_limit_check CHECK (qty IS NULL OR qty < vault_limit)) ENGINE=InnoDB`,
			`CREATE TABLE {db}.kids2 (id int AUTO_INCREMENT PRIMARY KEY, name varchar(40) NULL, vault_secret varchar(10) NOT NULL) ENGINE=InnoDB`,
		},
	})
	if err := mi.CreateTable(g.dir+"/mini-app/app", "kids2", []byte(vaultSchema)); err != nil {
		t.Fatal(err)
	}
	pol := store.Policy{
		Templates: []store.Template{{Name: "clerk", Rules: []store.Rule{
			{Object: "*/*/kids", Actions: []string{"create", "read", "update", "delete"}, Columns: []string{"id", "name", "qty", "parent_id"}},
			{Object: "*/*/kids2", Actions: []string{"create", "read"}, Columns: []string{"id", "name"}},
		}}},
		Bindings: []store.Binding{{Role: "clerk", Templates: []string{"clerk"}}},
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	id := store.Identity{Name: "cleo", Roles: []string{"clerk"}, ProjectID: g.proj.ID, SpaceID: space.ID, Kind: "user", KeyType: "crud", Enabled: true}
	if _, err := g.st.CreateIdentity(ctx, id); err != nil {
		t.Fatal(err)
	}
	cleo := g.mint("cleo", auth.MintOptions{})

	t.Run("mi", func(t *testing.T) {
		// A mini-app table validates the whole stored document: a required
		// field the clerk cannot see is missing from every write it makes.
		g.waitFor("/mi/app/kids2?ps=1&pg=0")
		// The policy was replaced in the store: it reaches the engine
		// within 2 s.
		waitStatus(t, g, auto+"/mi/app/kids2?ps=1&pg=0", cleo, 200)
		r := g.do("POST", auto+"/mi/app/kids2", cleo, map[string]any{"name": "a"})
		if r.status != 400 || strings.Contains(strings.ToLower(string(r.body)), "vault") {
			t.Fatalf("hidden required field: %d %s", r.status, r.body)
		}
		r = g.do("POST", auto+"/mi/app/kids2", g.admin, map[string]any{"name": "a"})
		if r.status != 400 || !strings.Contains(r.errorMessage(t), "vault_secret") {
			t.Fatalf("the admin, who sees the field, is not told its name: %d %s", r.status, r.body)
		}
	})
	for _, typ := range []string{"pg", "ma"} {
		t.Run(typ, func(t *testing.T) {
			kids := auto + "/" + typ + "/" + name + "/kids"
			kids2 := auto + "/" + typ + "/" + name + "/kids2"
			g.waitFor("/" + typ + "/" + name + "/kids?ps=1&pg=0")
			g.waitFor("/" + typ + "/" + name + "/kids2?ps=1&pg=0")
			for _, c := range []struct {
				what, path string
				body       map[string]any
				says       string
			}{
				{"hidden NOT NULL column", kids2, map[string]any{"name": "a"}, "requires a value"},
				{"missing referenced row", kids, map[string]any{"name": "a", "parent_id": 999}, "foreign key"},
				{"check over a hidden column", kids, map[string]any{"name": "a", "qty": 50}, "check constraint"},
				{"visible NOT NULL column", kids, map[string]any{"qty": 1}, "requires a value"},
			} {
				r := g.do("POST", c.path, cleo, c.body)
				if r.status != 400 {
					t.Fatalf("%s: %d %s", c.what, r.status, r.body)
				}
				msg := r.errorMessage(t)
				if !strings.Contains(msg, c.says) {
					t.Errorf("%s: %q does not say %q", c.what, msg, c.says)
				}
				if strings.Contains(strings.ToLower(string(r.body)), "vault") {
					t.Errorf("%s: the answer spells a hidden name: %s", c.what, r.body)
				}
			}
			if typ == "pg" {
				// PostgreSQL says which column; the clerk may see it.
				msg := g.do("POST", kids, cleo, map[string]any{"qty": 1}).errorMessage(t)
				if !strings.Contains(msg, `"name"`) {
					t.Errorf("visible NOT NULL column not named: %q", msg)
				}
			}
		})
	}
}

const vaultSchema = `table: kids2
fields:
  - name: name
    type: string
  - name: vault_secret
    type: string
    required: true
`
