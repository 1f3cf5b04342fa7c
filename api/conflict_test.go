package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// TestDuplicateKeyHidesConstraintAndValue writes duplicate keys over REST on
// PostgreSQL and MariaDB as a role whose template hides the column the
// unique key covers (with the column's default filling it). The 409 names
// neither the constraint nor the hidden value nor the hidden column: a
// duplicate key is told in the same words on every dialect. (mi has no
// unique keys a REST write can hit, ch none at all.)
func TestDuplicateKeyHidesConstraintAndValue(t *testing.T) {
	g := newGateway(t, engine.Config{})
	ctx := context.Background()
	const (
		constraint = "uq_vault_pin_code"
		hidden     = "hunter2-vault-pin"
		column     = "vault_pin"
	)
	name := g.dialectDBs("dup", map[string][]string{
		"pg": {`CREATE TABLE {db}.accounts (
		id bigint PRIMARY KEY, code text NOT NULL, ` + column + ` text NOT NULL DEFAULT '` + hidden + `',
		CONSTRAINT ` + constraint + ` UNIQUE (` + column + `, code))`},
		"ma": {`CREATE TABLE {db}.accounts (
		id bigint PRIMARY KEY, code varchar(40) NOT NULL, ` + column + ` varchar(40) NOT NULL DEFAULT '` + hidden + `',
		CONSTRAINT ` + constraint + ` UNIQUE (` + column + `, code))`},
	})
	types := []string{"pg", "ma"}
	var rules []store.Rule
	for _, typ := range types {
		rules = append(rules, store.Rule{Object: typ + "/" + name + "/accounts", Actions: []string{"create", "read", "update"}, Columns: []string{"id", "code"}})
	}
	if err := g.st.ReplacePolicy(ctx, g.proj.ID, store.Policy{
		Templates: []store.Template{{Name: "clerk", Rules: rules}},
		Bindings:  []store.Binding{{Role: "clerk", Templates: []string{"clerk"}}},
	}); err != nil {
		t.Fatal(err)
	}
	space, _ := g.st.Space(ctx, g.proj.ID, "main")
	if _, err := g.st.CreateIdentity(ctx, store.Identity{ProjectID: g.proj.ID, SpaceID: space.ID, Name: "clerk", Kind: "user", Roles: []string{"clerk"}, KeyType: "crud", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	clerk := g.mint("clerk", auth.MintOptions{})

	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			path := auto + "/" + typ + "/" + name + "/accounts"
			g.waitFor("/" + typ + "/" + name + "/accounts?ps=1&pg=0")
			// The clerk cannot see the column: it is not in its rows.
			r := g.do("POST", path, clerk, []any{map[string]any{"id": 1, "code": "A"}, map[string]any{"id": 2, "code": "B"}})
			expect(t, r, 201)
			if strings.Contains(string(r.body), column) || strings.Contains(string(r.body), hidden) {
				t.Fatalf("insert answer shows the hidden column: %s", r.body)
			}
			for _, c := range []struct {
				what, method, path string
				body               any
			}{
				{"insert", "POST", path, map[string]any{"id": 3, "code": "A"}},
				{"insert batch", "POST", path, []any{map[string]any{"id": 4, "code": "C"}, map[string]any{"id": 5, "code": "B"}}},
				{"update", "PUT", path + "?id=eq.2", map[string]any{"code": "A"}},
			} {
				r := g.do(c.method, c.path, clerk, c.body)
				expect(t, r, 409)
				if code := r.json(t)["error"].(map[string]any)["code"]; code != "CONFLICT" {
					t.Errorf("%s: code %v", c.what, code)
				}
				msg := r.errorMessage(t)
				for _, secret := range []string{constraint, hidden, column, "hunter2", name} {
					if strings.Contains(strings.ToLower(string(r.body)), strings.ToLower(secret)) {
						t.Errorf("%s: the 409 names %q: %s", c.what, secret, r.body)
					}
				}
				if msg != "a row with the same key already exists" {
					t.Errorf("%s: message %q", c.what, msg)
				}
			}
			// Nothing of the refused writes is kept.
			r = g.do("GET", path+"?ps=10&pg=0&oy=id.as", clerk, nil)
			expect(t, r, 200)
			if got := fmt.Sprint(r.data(t)); got != "[map[code:A id:1] map[code:B id:2]]" {
				t.Fatalf("rows after the conflicts: %s", got)
			}
		})
	}
}
