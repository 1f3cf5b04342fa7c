package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// TestAdminListSessions lists the AI sessions of the caller's project,
// newest first, and nothing of another project; only an admin token may.
func TestAdminListSessions(t *testing.T) {
	g := newAdminGateway(t)
	ctx := context.Background()
	reader := g.userToken("reader", "hr-analyst")
	agent, err := g.st.Identity(ctx, g.proj.ID, "agent")
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.st.CreateSession(ctx, store.Session{ProjectID: g.proj.ID, IdentityID: agent.ID, Name: "first", IdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	second, err := g.st.CreateSession(ctx, store.Session{ProjectID: g.proj.ID, IdentityID: agent.ID, Name: "second", Context: "quarterly report"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.st.EndSession(ctx, first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// A session of another project.
	for _, c := range []struct{ path, body string }{
		{adm + "/orgs/demo/projects", `{"name":"Other","abbr":"other"}`},
		{adm + "/orgs/demo/projects/other/spaces", `{"name":"main"}`},
		{adm + "/orgs/demo/projects/other/identities", `{"name":"bot","space":"main","roles":["admin"]}`},
	} {
		expect(t, g.withKey("POST", c.path, c.body), 201)
	}
	org, _ := g.st.Org(ctx, "demo")
	other, err := g.st.ProjectByAbbr(ctx, org.ID, "other")
	if err != nil {
		t.Fatal(err)
	}
	bot, err := g.st.Identity(ctx, other.ID, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.st.CreateSession(ctx, store.Session{ProjectID: other.ID, IdentityID: bot.ID, Name: "elsewhere"}); err != nil {
		t.Fatal(err)
	}

	list := func(token, query string) reply {
		return g.send("GET", "/minimal/api/admin/v1/sessions"+query, map[string]string{"LB-Access-Token": token}, nil)
	}
	r := list(g.admin, "")
	expect(t, r, 200)
	if got := strings.Join(listed(t, r, "name"), ","); got != "second,first" {
		t.Fatalf("sessions: %s (%s)", got, r.body)
	}
	if got := strings.Join(listed(t, r, "state"), ","); got != "live,ended" {
		t.Fatalf("states: %s", got)
	}
	if got := listed(t, r, "id"); got[0] != second.ID || got[1] != first.ID {
		t.Fatalf("ids: %v", got)
	}
	if got := strings.Join(listed(t, list(g.admin, "?limit=1"), "name"), ","); got != "second" {
		t.Fatalf("limit=1: %s", got)
	}

	expectErr(t, list(g.admin, "?limit=0"), 400, `"limit"`)
	expectErr(t, list(g.admin, "?limit=x"), 400, `"limit"`)
	expectErr(t, list(reader, ""), 403, "hr-analyst")
	expectErr(t, list("", ""), 401)
	expectErr(t, g.withKey("GET", "/minimal/api/admin/v1/sessions", nil), 401)
}
