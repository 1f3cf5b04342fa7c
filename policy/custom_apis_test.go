package policy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

const customFile = `org: demo
project: demo
custom_apis:
  - uri: employees/by-department
    method: get
    version: 1
    type: pg
    schema: public
    mode: read
    description: Employees of one department.
    roles: [hr-analyst]
    tables: [employees]
    params:
      - {name: dept, type: integer, required: true, min: 1}
      - {name: name, type: string, default: "%", max_length: 40}
    sql: |
      SELECT id, full_name FROM employees
      WHERE department_id = :dept AND full_name LIKE :name
  - uri: employees/transfer
    method: POST
    version: 1
    type: pg
    schema: public
    mode: write
    roles: [hr-manager]
    params:
      - {name: id, type: integer, required: true}
      - {name: dept, type: integer, required: true}
    statements:
      - UPDATE employees SET department_id = :dept WHERE id = :id
      - INSERT INTO audit_log (msg) VALUES ('moved ' || :id)
`

// TestCustomAPIsApply: the section is applied, reapplied as nothing to
// change, modified field by field, exported back and emptied.
func TestCustomAPIsApply(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	changes, err := Apply(ctx, st, mustLoad(t, customFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"+ custom_api GET employees/by-department v1 (read on pg/public, roles [hr-analyst])\n",
		"+ custom_api POST employees/transfer v1 (write on pg/public, roles [hr-manager])\n",
	} {
		if !strings.Contains(changes.String(), want) {
			t.Errorf("changes lack %q:\n%s", want, changes)
		}
	}
	_, proj, err := Resolve(ctx, st, "demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	apis, err := st.CustomAPIs(ctx, proj.ID)
	if err != nil || len(apis) != 2 || apis[0].Method != "GET" || len(apis[1].Statements) != 2 || *apis[0].Params[1].Default != "%" {
		t.Fatalf("stored %+v, %v", apis, err)
	}
	seq := counter(t, st)
	if changes, err := Apply(ctx, st, mustLoad(t, customFile)); err != nil || !changes.Empty() {
		t.Fatalf("reapply: %v %v", changes, err)
	}
	if counter(t, st) != seq {
		t.Fatal("a reapply wrote")
	}

	// Field changes, one line each; the other sections stay absent.
	edited := strings.NewReplacer("roles: [hr-analyst]", "roles: [hr-analyst, auditor]", "max_length: 40", "max_length: 50",
		"'moved ' || :id", "'moved ' || :id || ' to ' || :dept").Replace(customFile)
	changes, err = Plan(ctx, st, mustLoad(t, edited))
	if err != nil {
		t.Fatal(err)
	}
	if want := "~ custom_api GET employees/by-department v1: roles [hr-analyst] -> [hr-analyst auditor]\n" +
		"~ custom_api GET employees/by-department v1: params changed\n" +
		"~ custom_api POST employees/transfer v1: statements changed\n"; changes.String() != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", changes, want)
	}
	if _, err := Apply(ctx, st, mustLoad(t, edited)); err != nil {
		t.Fatal(err)
	}

	// Export gives back a file that applies as nothing to change.
	exported, err := Export(ctx, st, "demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exported.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"custom_apis:\n  - uri: employees/by-department\n    method: GET\n",
		"      - {name: dept, type: integer, required: true, min: 1}\n",
		"    sql: |\n      SELECT id, full_name FROM employees\n",
		"    statements:\n      - UPDATE employees SET department_id = :dept WHERE id = :id\n",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	f, err := Load(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("export does not load: %v\n%s", err, out)
	}
	if changes, err := Plan(ctx, st, f); err != nil || !changes.Empty() {
		t.Fatalf("export is not nothing-to-change: %v %v\n%s", changes, err, out)
	}
	if text := exported.Text(); !strings.Contains(text, "custom_api GET employees/by-department v1 (read on pg/public, roles [hr-analyst auditor], params [dept integer, name string], 1 statement)\n") {
		t.Fatalf("text:\n%s", text)
	}

	// An absent section is left alone; an empty one removes everything.
	if changes, err := Apply(ctx, st, mustLoad(t, "org: demo\nproject: demo\n")); err != nil || !changes.Empty() {
		t.Fatalf("absent section: %v %v", changes, err)
	}
	changes, err = Apply(ctx, st, mustLoad(t, "org: demo\nproject: demo\ncustom_apis: []\n"))
	if err != nil || strings.Count(changes.String(), "- custom_api ") != 2 {
		t.Fatalf("empty section: %v %v", changes, err)
	}
	if apis, _ := st.CustomAPIs(ctx, proj.ID); len(apis) != 0 {
		t.Fatalf("left %v", apis)
	}
}

// TestCustomAPIsValidate: problems are reported with their line, all at
// once, before the store is touched.
func TestCustomAPIsValidate(t *testing.T) {
	bad := `org: demo
project: demo
custom_apis:
  - uri: a
    method: GET
    version: 1
    type: pg
    schema: public
    mode: read
    roles: [r]
    sql: SELECT 1
    statements: [SELECT 2]
  - uri: b
    method: GET
    version: 1
    type: pg
    schema: public
    mode: read
    roles: [r]
    params: [{name: x, type: string}]
    sql: SELECT * FROM t WHERE name LIKE '%:x%'
  - uri: c
    method: GET
    type: pg
    schema: public
    mode: read
    roles: [r]
    sql: SELECT 1
  - uri: d
    method: GET
    version: 1
    type: pg
    schema: public
    mode: read
    roles: [r]
    sql: SELECT 1
  - uri: d
    method: GET
    version: 1
    type: pg
    schema: public
    mode: read
    roles: [r]
    sql: SELECT 2
  - uri: e
    method: GET
    version: 1
    type: pg
    schema: public
    mode: write
    roles: [r]
    sql: DELETE FROM t
`
	f := mustLoad(t, bad)
	err := f.Validate()
	if fault.KindOf(err) != fault.Invalid {
		t.Fatalf("validate: %v", err)
	}
	for _, want := range []string{
		`line 4: custom API "GET a": give sql or statements, not both`,
		"line 13: custom API GET b v1: statement 1: :x inside a string literal is text, not the parameter",
		`line 22: custom API "GET c": version is required (1 or more)`,
		"line 37: custom API GET d v1 is declared twice",
		"line 45: custom API GET e v1: a GET API must be mode read",
		"policy file has 5 problems",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("validation lacks %q:\n%v", want, err)
		}
	}
	if _, err := Load(strings.NewReader("org: demo\nproject: demo\ncustom_apis:\n  - {uri: a, colour: red}\n")); fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("unknown key: %v", err)
	}
}
