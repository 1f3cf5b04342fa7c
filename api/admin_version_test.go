package api_test

import (
	"context"
	"fmt"
	"testing"
)

// TestAdminPolicyVersion: policy answers carry the policy's version (field
// and ETag); a write naming a version the policy has moved past (If-Match
// or "version") is refused with 409 and changes nothing; a malformed or
// contradictory version is a 400; a write naming none applies to the
// current policy.
func TestAdminPolicyVersion(t *testing.T) {
	g := newAdminGateway(t)
	p := demoProj
	tok := map[string]string{"LB-Access-Token": g.admin}
	with := func(h map[string]string) map[string]string {
		out := map[string]string{"LB-Access-Token": g.admin}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	rule := func(object string) map[string]any {
		return map[string]any{"object": object, "actions": []string{"read"}}
	}

	r := g.send("POST", p+"/templates", tok, map[string]any{"name": "v", "rules": []any{rule("mi/app/a")}})
	expect(t, r, 201)
	v1 := field(t, r, "version")
	if r.header.Get("ETag") != `"`+v1+`"` {
		t.Fatalf("create: ETag %q, version %s", r.header.Get("ETag"), v1)
	}
	r = g.send("GET", p+"/templates/v", tok, nil)
	expect(t, r, 200)
	if field(t, r, "version") != v1 || r.header.Get("ETag") != `"`+v1+`"` {
		t.Fatalf("get: version %s ETag %q, want %s", field(t, r, "version"), r.header.Get("ETag"), v1)
	}
	etag := r.header.Get("ETag")
	for _, list := range []string{"/templates", "/bindings", "/locks", "/scopes"} {
		if r := g.send("GET", p+list, tok, nil); r.status != 200 || r.header.Get("ETag") != etag {
			t.Fatalf("GET %s: %d ETag %q, want %q", list, r.status, r.header.Get("ETag"), etag)
		}
	}

	// A write at the version read applies and moves the version.
	r = g.send("PUT", p+"/templates/v", with(map[string]string{"If-Match": etag}), map[string]any{"rules": []any{rule("mi/app/a"), rule("mi/app/b")}})
	expect(t, r, 200)
	v2 := field(t, r, "version")
	if v2 == v1 || r.header.Get("ETag") != `"`+v2+`"` {
		t.Fatalf("put at the version read: version %s ETag %q (was %s)", v2, r.header.Get("ETag"), v1)
	}

	// A write at the old version — of this item or any other of the
	// policy, by header or by field — is 409 and changes nothing.
	stale := []struct {
		name, method, path string
		hdr                map[string]string
		body               any
	}{
		{"put by If-Match", "PUT", "/templates/v", with(map[string]string{"If-Match": etag}), map[string]any{"rules": []any{rule("mi/app/c")}}},
		{"put by weak If-Match", "PUT", "/templates/v", with(map[string]string{"If-Match": "W/" + etag}), map[string]any{"rules": []any{rule("mi/app/c")}}},
		{"put by field", "PUT", "/templates/v", tok, map[string]any{"rules": []any{rule("mi/app/c")}, "version": json64(t, v1)}},
		{"delete by If-Match", "DELETE", "/templates/v", with(map[string]string{"If-Match": etag}), nil},
		{"create template", "POST", "/templates", tok, map[string]any{"name": "w", "version": json64(t, v1)}},
		{"create binding", "POST", "/bindings", with(map[string]string{"If-Match": etag}), map[string]any{"role": "r", "templates": []string{"v"}}},
		{"create lock", "POST", "/locks", tok, map[string]any{"object": "mi", "mask": "-r--", "version": json64(t, v1)}},
		{"create scope", "POST", "/scopes", with(map[string]string{"If-Match": etag}), map[string]any{"role": "r", "object": "mi", "filter": "title=eq.x"}},
	}
	for _, c := range stale {
		r := g.send(c.method, p+c.path, c.hdr, c.body)
		expectErr(t, r, 409, "changed since version "+v1, "version "+v2+" now")
		if e, _ := r.json(t)["error"].(map[string]any); e["code"] != "CONFLICT" {
			t.Fatalf("%s: %s", c.name, r.body)
		}
	}
	r = g.send("GET", p+"/templates/v", tok, nil)
	if field(t, r, "version") != v2 || len(r.json(t)["rules"].([]any)) != 2 {
		t.Fatalf("after stale writes: %s", r.body)
	}
	for _, path := range []string{"/templates/w", "/bindings/r", "/locks/mi", "/scopes/r/mi"} {
		expect(t, g.send("GET", p+path, tok, nil), 404)
	}

	// Malformed or contradictory versions are 400, before anything is read.
	bad := []struct {
		name    string
		hdr     map[string]string
		body    any
		mention string
	}{
		{"not a number", with(map[string]string{"If-Match": `"abc"`}), map[string]any{"rules": []any{}}, `If-Match "\"abc\""`},
		{"zero", with(map[string]string{"If-Match": `"0"`}), map[string]any{"rules": []any{}}, "not a version"},
		{"two tags", with(map[string]string{"If-Match": `"1", "2"`}), map[string]any{"rules": []any{}}, "names 2 versions"},
		{"field zero", tok, map[string]any{"rules": []any{}, "version": 0}, `field "version"`},
		{"field not integer", tok, map[string]any{"rules": []any{}, "version": "7"}, `field "version" must be an integer`},
		{"header and field differ", with(map[string]string{"If-Match": `"` + v2 + `"`}), map[string]any{"rules": []any{}, "version": json64(t, v1)}, "send one"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			expectErr(t, g.send("PUT", p+"/templates/v", c.hdr, c.body), 400, c.mention)
		})
	}

	// If-Match: * and no version at all apply to the current policy.
	r = g.send("PUT", p+"/locks/"+"mi", with(map[string]string{"If-Match": "*"}), map[string]any{"mask": "-r--"})
	expect(t, r, 404)
	r = g.send("POST", p+"/locks", with(map[string]string{"If-Match": "*"}), map[string]any{"object": "mi", "mask": "-r--"})
	expect(t, r, 201)
	r = g.send("PUT", p+"/templates/v", tok, map[string]any{"rules": []any{rule("mi/app/d")}, "version": json64(t, field(t, r, "version"))})
	expect(t, r, 200)
	r = g.send("DELETE", p+"/locks/mi", with(map[string]string{"If-Match": r.header.Get("ETag")}), nil)
	expect(t, r, 204)

	// Writes through the store (minimal apply, the CLI) move the version
	// too: an ETag read before them is stale after.
	r = g.send("GET", p+"/templates/v", tok, nil)
	etag = r.header.Get("ETag")
	pol, err := g.st.Policy(context.Background(), g.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.st.ReplacePolicy(context.Background(), g.proj.ID, pol); err != nil {
		t.Fatal(err)
	}
	expectErr(t, g.send("DELETE", p+"/templates/v", with(map[string]string{"If-Match": etag}), nil), 409)
	expect(t, g.send("DELETE", p+"/templates/v", tok, nil), 204)
}

// json64 turns a version read as text back into a JSON number.
func json64(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("version %q: %v", s, err)
	}
	return n
}
