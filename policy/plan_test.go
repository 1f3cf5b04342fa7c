package policy

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	t.Setenv(store.EnvMasterKey, "")
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func counter(t *testing.T, st *store.Store) int64 {
	t.Helper()
	n, err := st.ChangeSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustLoad(t *testing.T, s string) *File {
	t.Helper()
	f, err := Load(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func exampleFile(t *testing.T) *File {
	t.Helper()
	f, err := LoadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func exampleText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const wantExampleChanges = `+ org demo
+ project demo
+ space main (mcp off, named by identity alice)
+ identity alice (user, space main, roles [hr-analyst], claims {"department_id":6})
+ template hr-read (3 rules)
+ binding hr-analyst -> [hr-read]
+ lock pg/public/audit_log -r--
+ scope hr-analyst on pg/public/employees where department_id=eq.{claims.department_id}
`

func TestDryRunWritesNothing(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	before := counter(t, st)
	changes, err := Plan(ctx, st, exampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := changes.String(); got != wantExampleChanges {
		t.Fatalf("Plan =\n%s\nwant\n%s", got, wantExampleChanges)
	}
	if counter(t, st) != before {
		t.Fatal("Plan moved the change counter")
	}
	if ok, err := st.Bootstrapped(ctx); err != nil || ok {
		t.Fatalf("Plan created an org (%v, %v)", ok, err)
	}
}

func TestApplyIdempotent(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	changes, err := Apply(ctx, st, exampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := changes.String(); got != wantExampleChanges {
		t.Fatalf("Apply =\n%s\nwant\n%s", got, wantExampleChanges)
	}

	_, proj, err := Resolve(ctx, st, "demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := st.Identity(ctx, proj.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if alice.Kind != "user" || alice.KeyType != "crud" || !alice.Enabled || !reflect.DeepEqual(alice.Roles, []string{"hr-analyst"}) ||
		alice.Claims["department_id"] != float64(6) {
		t.Fatalf("alice = %+v", alice)
	}
	pol, err := st.Policy(ctx, proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Templates) != 1 || len(pol.Templates[0].Rules) != 3 || pol.Templates[0].Rules[2].Effect != store.EffectDeny ||
		len(pol.Bindings) != 1 || len(pol.Locks) != 1 || pol.Locks[0].Pattern != "pg/public/audit_log" || len(pol.Scopes) != 1 {
		t.Fatalf("policy = %+v", pol)
	}

	before := counter(t, st)
	again, err := Apply(ctx, st, exampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() || again.String() != "= nothing to change\n" {
		t.Fatalf("second Apply = %q", again.String())
	}
	if counter(t, st) != before {
		t.Fatal("a second Apply of the same file moved the change counter")
	}
}

func TestPlanReportsWhatDiffers(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	if _, err := Apply(ctx, st, exampleFile(t)); err != nil {
		t.Fatal(err)
	}
	src := exampleText(t)
	for _, r := range [][2]string{
		{"roles: [hr-analyst], claims: {department_id: 6}", "roles: [hr-analyst, auditor], claims: {department_id: 7}, key_type: '-r--', enabled: false"},
		{"identities:\n", "spaces:\n  - {name: main, mcp: true}\n  - {name: side}\nidentities:\n  - {name: bob, kind: service, space: side}\n"},
		{`- {object: "pg/public/*", actions: [read]}`, `- {object: "pg/public/*", actions: [read, create]}`},
		{"      - {object: \"pg/public/salaries\", actions: [read, update], effect: deny}\n", ""},
		{"  - {role: hr-analyst, templates: [hr-read]}\n", "  - {role: hr-analyst, templates: [hr-read, ops]}\n"},
		{"bindings:\n", "  - name: ops\n    rules: [{object: \"mi\", actions: [read]}]\nbindings:\n"},
		{`mask: "-r--"`, `mask: "----"}` + "\n" + `  - {object: pg, mask: "-r--"`},
		{"scopes:\n  - {role: hr-analyst, object: \"pg/public/employees\", filter: \"department_id=eq.{claims.department_id}\"}\n", "scopes: []\n"},
	} {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("fixture lacks %q", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	f := mustLoad(t, src)

	changes, err := Plan(ctx, st, f)
	if err != nil {
		t.Fatal(err)
	}
	want := `~ space main: mcp off -> on
+ space side (mcp off)
+ identity bob (service, space side, roles [])
~ identity alice: roles [hr-analyst] -> [hr-analyst auditor]
~ identity alice: claims {"department_id":6} -> {"department_id":7}
~ identity alice: key_type crud -> -r--
~ identity alice: enabled true -> false
~ template hr-read: rule 2: allow [read] on pg/public/* -> allow [read create] on pg/public/*
~ template hr-read: - rule 3: deny [read update] on pg/public/salaries
+ template ops (1 rule)
~ binding hr-analyst: [hr-read] -> [hr-read ops]
+ lock pg -r--
~ lock pg/public/audit_log: -r-- -> ----
- scope hr-analyst on pg/public/employees where department_id=eq.{claims.department_id}
`
	if got := changes.String(); got != want {
		t.Fatalf("Plan =\n%s\nwant\n%s", got, want)
	}
	before := counter(t, st)
	applied, err := Apply(ctx, st, f)
	if err != nil {
		t.Fatal(err)
	}
	if applied.String() != want {
		t.Fatalf("Apply reported\n%s", applied)
	}
	if counter(t, st) == before {
		t.Fatal("Apply wrote nothing")
	}
	if rest, err := Plan(ctx, st, f); err != nil || !rest.Empty() {
		t.Fatalf("after Apply, Plan = %v, %v", rest, err)
	}

	// Going back to the example reverses every change (except the new
	// identity and space, which the example does not mention).
	back, err := Apply(ctx, st, exampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"~ identity alice: roles [hr-analyst auditor] -> [hr-analyst]",
		"- template ops (1 rule)",
		"~ template hr-read: + rule 3: deny [read update] on pg/public/salaries",
		"- lock pg -r--",
		"+ scope hr-analyst on pg/public/employees",
	} {
		if !strings.Contains(back.String(), line) {
			t.Errorf("reverse plan lacks %q:\n%s", line, back)
		}
	}
	if strings.Contains(back.String(), "bob") || strings.Contains(back.String(), "space") {
		t.Errorf("reverse plan touches what the file does not mention:\n%s", back)
	}
}

func TestAbsentSectionsAreLeftAlone(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	if _, err := Apply(ctx, st, exampleFile(t)); err != nil {
		t.Fatal(err)
	}
	f := mustLoad(t, "org: demo\nproject: demo\nidentities:\n  - {name: carol, space: main}\n")
	changes, err := Apply(ctx, st, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := changes.String(); got != "+ identity carol (user, space main, roles [])\n" {
		t.Fatalf("Apply = %q", got)
	}
	_, proj, _ := Resolve(ctx, st, "demo", "demo")
	pol, err := st.Policy(ctx, proj.ID)
	if err != nil || len(pol.Templates) != 1 || len(pol.Scopes) != 1 || len(pol.Locks) != 1 {
		t.Fatalf("policy changed: %+v %v", pol, err)
	}
	// Bindings alone are checked against the store's templates.
	f = mustLoad(t, "org: demo\nproject: demo\nbindings:\n  - {role: x, templates: [hr-read, ghost]}\n")
	if _, err := Plan(ctx, st, f); fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, `"ghost"`) {
		t.Fatalf("binding to an unknown template: %v", err)
	}
	// Removing the templates a kept binding names is refused, in a dry run
	// too, and writes nothing.
	before := counter(t, st)
	f = mustLoad(t, "org: demo\nproject: demo\ntemplates: []\n")
	if _, err := Plan(ctx, st, f); fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, `"hr-read"`) {
		t.Fatalf("dangling binding: %v", err)
	}
	if _, err := Apply(ctx, st, f); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("dangling binding applied: %v", err)
	}
	if counter(t, st) != before {
		t.Fatal("a refused apply wrote")
	}
	// Emptying both is fine.
	f = mustLoad(t, "org: demo\nproject: demo\ntemplates: []\nbindings: []\n")
	changes, err = Apply(ctx, st, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := changes.String(); got != "- template hr-read (3 rules)\n- binding hr-analyst -> [hr-read]\n" {
		t.Fatalf("Apply = %q", got)
	}
}

func TestIdentitiesNotInFileAreLeftAlone(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	if _, err := Apply(ctx, st, mustLoad(t, "org: demo\nproject: demo\nspaces: [{name: main, mcp: true}]\n")); err != nil {
		t.Fatal(err)
	}
	_, proj, _ := Resolve(ctx, st, "demo", "demo")
	sp, err := st.Space(ctx, proj.ID, "main")
	if err != nil || !sp.MCPEnabled {
		t.Fatalf("space main: %+v %v", sp, err)
	}
	admin, err := st.CreateIdentity(ctx, store.Identity{ProjectID: proj.ID, SpaceID: sp.ID, Name: "admin", Kind: "user",
		Roles: []string{"admin"}, KeyType: "crud", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, st, exampleFile(t)); err != nil {
		t.Fatal(err)
	}
	got, err := st.Identity(ctx, proj.ID, "admin")
	if err != nil || !reflect.DeepEqual(got, admin) {
		t.Fatalf("admin changed: %+v %v", got, err)
	}
	// The example names main without spaces:; its MCP switch stays on.
	if sp, _ := st.Space(ctx, proj.ID, "main"); !sp.MCPEnabled {
		t.Fatal("apply switched MCP off on a space it did not declare")
	}
}

func TestResolveByAbbreviation(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	o, err := st.CreateOrg(ctx, "Little Bit Labs", "lbl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateProject(ctx, o.ID, "Human Resources", "hr"); err != nil {
		t.Fatal(err)
	}
	// One lookup, by abbreviation: display names change (a rename), the
	// abbreviations do not, and a name that is another org's abbreviation
	// cannot pick the wrong one.
	if _, p, err := Resolve(ctx, st, "lbl", "hr"); err != nil || p.Abbr != "hr" {
		t.Fatalf("Resolve(lbl, hr) = %+v, %v", p, err)
	}
	if _, _, err := Resolve(ctx, st, "Little Bit Labs", "Human Resources"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("Resolve by display name: %v, want NotFound", err)
	}
	if _, err := st.RenameOrg(ctx, o.ID, "LBL Inc"); err != nil {
		t.Fatal(err)
	}
	if _, p, err := Resolve(ctx, st, "lbl", "hr"); err != nil || p.Abbr != "hr" {
		t.Fatalf("Resolve(lbl, hr) after the rename = %+v, %v", p, err)
	}
	if _, _, err := Resolve(ctx, st, "lbl", "nope"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("unknown project: %v", err)
	}
	// A file naming the project by abbreviation updates it, not a new one.
	changes, err := Plan(ctx, st, mustLoad(t, "org: lbl\nproject: hr\nlocks: [{object: pg, mask: '-r--'}]\n"))
	if err != nil || changes.String() != "+ lock pg -r--\n" {
		t.Fatalf("Plan = %v, %v", changes, err)
	}
	// A missing org whose name is no abbreviation cannot be created.
	_, err = Plan(ctx, st, mustLoad(t, "org: New Org\nproject: p\n"))
	if fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, `"New Org"`) {
		t.Fatalf("org without abbreviation: %v", err)
	}
}

func TestExportRoundTrip(t *testing.T) {
	st := openStore(t)
	ctx := t.Context()
	if _, err := Apply(ctx, st, exampleFile(t)); err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(exampleText(t), "identities:\n", `spaces: [{name: main, mcp: true}]
identities:
  - name: svc
    kind: service
    space: main
    roles: [b, a]
    claims: {tenant: {id: 7, tags: [x, y]}, ratio: 0.5, name: "quoted: yes"}
    key_type: "-r-d"
    enabled: false
`, 1)
	if _, err := Apply(ctx, st, mustLoad(t, extra)); err != nil {
		t.Fatal(err)
	}
	exported, err := Export(ctx, st, "demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exported.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("exported file does not load: %v\n%s", err, out)
	}
	changes, err := Plan(ctx, st, f)
	if err != nil {
		t.Fatal(err)
	}
	if !changes.Empty() {
		t.Fatalf("exported file is not nothing-to-change:\n%s\n%s", changes, out)
	}
	for _, want := range []string{
		"org: demo\n",
		"  - {name: main, mcp: true}\n",
		"      - {object: pg/public/salaries, actions: [read, update], effect: deny}\n",
		"  - {role: hr-analyst, templates: [hr-read]}\n",
		"  - {object: pg/public/audit_log, mask: \"-r--\"}\n",
		"    key_type: \"-r-d\"\n",
		"    roles: [b, a]\n",
		"    enabled: false\n",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	text := exported.Text()
	for _, want := range []string{
		"org demo, project demo\n",
		"space main (mcp on)\n",
		`identity alice (user, space main, roles [hr-analyst], key_type crud, claims {"department_id":6})`,
		"identity svc (service, space main, roles [b a], key_type -r-d, claims",
		"template hr-read (3 rules)\n  1. allow [read] on pg/public/employees, columns [id full_name department_id]\n",
		"binding hr-analyst -> [hr-read]\n",
		"lock pg/public/audit_log -r--\n",
		"scope hr-analyst on pg/public/employees where department_id=eq.{claims.department_id}\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// An empty project exports with every policy section present, empty.
	o, _ := st.Org(ctx, "demo")
	if _, err := st.CreateProject(ctx, o.ID, "empty", "empty"); err != nil {
		t.Fatal(err)
	}
	ef, err := Export(ctx, st, "demo", "empty")
	if err != nil {
		t.Fatal(err)
	}
	eb, _ := ef.Marshal()
	if want := "org: demo\nproject: empty\ntemplates: []\nbindings: []\nlocks: []\nscopes: []\ncustom_apis: []\n"; string(eb) != want {
		t.Fatalf("empty export = %q", eb)
	}
}
