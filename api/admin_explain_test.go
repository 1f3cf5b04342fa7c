package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestAdminExplain asks the admin API how requests of identities would
// fare: an allowed read shows its gates and SQL, a refused one the error
// and the roles, and explaining a delete deletes nothing.
func TestAdminExplain(t *testing.T) {
	g := newAdminGateway(t)
	analyst := g.userToken("ann", "hr-analyst")
	notes := auto + "/mi/app/notes"
	explain := func(token string, q url.Values) reply {
		return g.send("GET", demoProj+"/explain?"+q.Encode(), map[string]string{"LB-Access-Token": token}, nil)
	}

	r := explain(g.admin, url.Values{"identity": {"admin"}, "path": {notes + "?ps=10&pg=0&oy=id.as"}})
	expect(t, r, 200)
	x := r.json(t)
	if x["object"] != "mi/app/notes" || x["action"] != "read" || x["method"] != "GET" || !strings.HasPrefix(x["sql"].(string), "SELECT ") {
		t.Fatalf("allowed read: %s", r.body)
	}
	if out := x["outcome"].(map[string]any); out["allowed"] != true {
		t.Fatalf("outcome: %s", r.body)
	}
	if gates := x["gates"].([]any); len(gates) < 2 || gates[0].(map[string]any)["name"] != "tenancy" {
		t.Fatalf("gates: %s", r.body)
	}

	// hr-analyst may only create notes: its read is refused, and the
	// refusal names the roles held, as the Auto API would answer it.
	expect(t, g.send("POST", demoProj+"/templates", map[string]string{"LB-Access-Token": g.admin},
		map[string]any{"name": "notes-create", "rules": []map[string]any{{"object": "mi/app/notes", "actions": []string{"create"}}}}), 201)
	expect(t, g.send("POST", demoProj+"/bindings", map[string]string{"LB-Access-Token": g.admin},
		map[string]any{"role": "hr-analyst", "templates": []string{"notes-create"}}), 201)
	var out map[string]any
	eventually(t, "the binding reaches the engine", func() (bool, string) {
		r = explain(g.admin, url.Values{"identity": {"ann"}, "path": {notes + "?ps=10&pg=0"}})
		x = r.json(t)
		out, _ = x["outcome"].(map[string]any)
		return r.status == 200 && out["code"] == "FORBIDDEN", string(r.body)
	})
	if out["allowed"] != false || !strings.Contains(out["message"].(string), "hr-analyst") || x["sql"] != nil {
		t.Fatalf("refused read: %s", r.body)
	}
	if real := g.do("GET", notes+"?ps=10&pg=0", analyst, nil); real.status != 403 || real.errorMessage(t) != out["message"] {
		t.Fatalf("explain said %q, the Auto API answered %d %s", out["message"], real.status, real.body)
	}

	// Explaining a delete runs nothing.
	r = explain(g.admin, url.Values{"identity": {"admin"}, "method": {"delete"}, "path": {notes + "?id=eq.1"}})
	expect(t, r, 200)
	if x := r.json(t); x["action"] != "delete" || x["sql"] == nil || x["outcome"].(map[string]any)["allowed"] != true {
		t.Fatalf("delete: %s", r.body)
	}
	if rows := g.do("GET", notes+"?ps=10&pg=0", g.admin, nil); rows.status != 200 || strings.Count(string(rows.body), `"title"`) != 3 {
		t.Fatalf("explain deleted: %s", rows.body)
	}

	// Refusals of the endpoint itself.
	expectErr(t, explain(g.admin, url.Values{"path": {notes}}), 400, `"identity" is required`)
	expectErr(t, explain(g.admin, url.Values{"identity": {"admin"}}), 400, `"path" is required`)
	expectErr(t, explain(g.admin, url.Values{"identity": {"admin"}, "path": {"/etc/passwd"}}), 400, `must be a request path`)
	expectErr(t, explain(g.admin, url.Values{"identity": {"admin"}, "path": {notes}, "method": {"PATCHY"}}), 400, `GET, POST, PUT or DELETE`)
	expectErr(t, explain(g.admin, url.Values{"identity": {"admin"}, "path": {notes}}), 400, `"ps" is required`)
	expectErr(t, explain(g.admin, url.Values{"identity": {"nobody"}, "path": {notes + "?ps=1&pg=0"}}), 404)
	expectErr(t, explain(analyst, url.Values{"identity": {"admin"}, "path": {notes + "?ps=1&pg=0"}}), 403, "hr-analyst")
	expectErr(t, explain("", url.Values{"identity": {"admin"}, "path": {notes + "?ps=1&pg=0"}}), 401)
	expectErr(t, g.send("GET", adm+"/orgs/other/projects/demo/explain?identity=admin&path="+url.QueryEscape(notes+"?ps=1&pg=0"), map[string]string{"LB-Access-Token": g.admin}, nil), 404)
}
