package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

const example = "testdata/example.yaml"

func loadString(t *testing.T, s string) (*File, error) {
	t.Helper()
	return Load(strings.NewReader(s))
}

func TestLoadExample(t *testing.T) {
	f, err := LoadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	if f.Org != "demo" || f.Project != "demo" || len(f.Identities) != 1 || len(f.Templates) != 1 ||
		len(f.Templates[0].Rules) != 3 || len(f.Bindings) != 1 || len(f.Locks) != 1 || len(f.Scopes) != 1 {
		t.Fatalf("decoded %+v", f)
	}
	alice := f.Identities[0]
	if alice.Name != "alice" || alice.Space != "main" || alice.Claims["department_id"] != 6 || alice.KeyType != "" || alice.Enabled != nil {
		t.Fatalf("alice = %+v", alice)
	}
	if w := alice.want(); w.Kind != "user" || w.KeyType != "crud" || !w.Enabled || w.Claims["department_id"] != float64(6) {
		t.Fatalf("defaults: %+v", w)
	}
	r := f.Templates[0].Rules
	if r[0].Columns == nil || r[1].Columns != nil || r[2].Effect != "deny" || r[1].Effect != "" {
		t.Fatalf("rules %+v", r)
	}
	if alice.line != 5 || f.Templates[0].line != 7 || r[2].line != 11 || f.Scopes[0].line != 17 {
		t.Fatalf("lines: identity %d template %d rule %d scope %d", alice.line, f.Templates[0].line, r[2].line, f.Scopes[0].line)
	}
	if f.Spaces != nil {
		t.Fatal("absent spaces section decoded as non-nil")
	}
}

func TestLoadSectionsAbsentEmptyNull(t *testing.T) {
	f, err := loadString(t, "org: a\nproject: b\ntemplates: []\nbindings:\n")
	if err != nil {
		t.Fatal(err)
	}
	if f.Templates == nil || len(f.Templates) != 0 {
		t.Errorf("templates: [] decoded as %#v, want empty non-nil", f.Templates)
	}
	if f.Bindings != nil || f.Locks != nil || f.Scopes != nil {
		t.Errorf("null/absent sections should be nil: %#v %#v %#v", f.Bindings, f.Locks, f.Scopes)
	}
}

func TestLoadStrict(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		wants []string // texts the message must contain
	}{
		{"unknown top-level key", "org: a\nproject: b\ncolour: red\n", []string{"line 3", "colour"}},
		{"unknown identity key", "org: a\nproject: b\nidentities:\n  - name: x\n    space: main\n    role: [a]\n", []string{"line 6", "role"}},
		{"unknown rule key", "org: a\nproject: b\ntemplates:\n  - name: t\n    rules:\n      - {object: pg, actions: [read], allow: true}\n", []string{"line 6", "allow"}},
		{"repeated key", "org: a\norg: b\nproject: c\n", []string{"line 2", `"org"`}},
		{"wrong type", "org: a\nproject: b\nidentities: {name: x}\n", []string{"line 3"}},
		{"wrong scalar type", "org: a\nproject: b\nspaces:\n  - {name: m, mcp: maybe}\n", []string{"line 4", "maybe"}},
		{"empty", "", []string{"empty"}},
		{"only a comment", "# nothing\n", []string{"empty"}},
		{"two documents", "org: a\nproject: b\n---\norg: c\nproject: d\n", []string{"second YAML document", "line 3"}},
		{"not YAML", "org: [a\n", []string{"not valid YAML", "line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.in)
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("err = %v, want Invalid", err)
			}
			msg := fault.As(err).Message
			for _, w := range tt.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	_, err := LoadFile("testdata/nope.yaml")
	if fault.KindOf(err) != fault.NotFound {
		t.Fatalf("missing file: %v", err)
	}
	dir := t.TempDir()
	path := dir + "/bad.yaml"
	if err := os.WriteFile(path, []byte("org: a\nproject: b\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(path)
	if fault.KindOf(err) != fault.Invalid || !strings.HasPrefix(fault.As(err).Message, path+": ") {
		t.Fatalf("bad file: %v", err)
	}
	big := strings.NewReader("org: a\n" + strings.Repeat("#", MaxFileSize))
	if _, err := Load(big); fault.KindOf(err) != fault.TooLarge {
		t.Fatalf("oversized file: %v", err)
	}
}

func TestValidate(t *testing.T) {
	base, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		old, new   string // replaced once in the example
		wants      []string
		wantsCount int // number of problems when > 1
	}{
		{"no org", "org: demo", "org: ''", []string{"line 2", "org is required"}, 0},
		{"bad kind", "kind: user", "kind: robot", []string{"line 5", `identity "alice"`, `"robot"`}, 0},
		{"no space", "space: main, ", "", []string{`identity "alice": space is required`}, 0},
		{"bad key_type", "claims: {department_id: 6}", "claims: {department_id: 6}, key_type: rw", []string{`identity "alice"`, "key_type", `"rw"`}, 0},
		{"upper-case key_type", "claims: {department_id: 6}", "claims: {department_id: 6}, key_type: CRUD", []string{`write it as "crud"`}, 0},
		{"role twice", "roles: [hr-analyst]", "roles: [hr-analyst, hr-analyst]", []string{`role "hr-analyst" is listed twice`}, 0},
		{"claims with non-string keys", "claims: {department_id: 6}", "claims: {department_id: {1: x}}", []string{`identity "alice"`, "JSON"}, 0},
		{"duplicate identity", "identities:\n", "identities:\n  - {name: alice, space: main}\n", []string{`identity "alice" is declared twice`, "line 6"}, 0},
		{"bad action", "actions: [read]}", "actions: [write]}", []string{"line 10", `template "hr-read", rule 2`, `"write"`}, 0},
		{"no actions", `actions: [read], columns`, `actions: [], columns`, []string{"rule 1: actions are required"}, 0},
		{"bad effect", "effect: deny", "effect: maybe", []string{"rule 3", `"maybe"`}, 0},
		{"empty columns", "columns: [id, full_name, department_id]", "columns: []", []string{"columns is an empty list"}, 0},
		{"four segments", `"pg/public/*"`, `"pg/public/x/y"`, []string{"rule 2", `"pg/public/x/y"`}, 0},
		{"bad glob", `"pg/public/*"`, `"pg/public/["`, []string{"rule 2", `"pg/public/["`, "glob"}, 0},
		{"unknown template in binding", "templates: [hr-read]", "templates: [hr-read, hr-write]", []string{"line 13", `unknown template "hr-write"`}, 0},
		{"empty binding", "templates: [hr-read]", "templates: []", []string{`binding of role "hr-analyst" names no template`}, 0},
		{"bad lock mask", `mask: "-r--"`, `mask: "r---"`, []string{"line 15", `lock on "pg/public/audit_log"`, "position 1"}, 0},
		{"bad lock object", `"pg/public/audit_log"`, `"pg//audit_log"`, []string{"empty segment"}, 0},
		{"unknown variable", "{claims.department_id}", "{user}", []string{"line 17", `scope of role "hr-analyst" on "pg/public/employees"`, "unknown variable {user}"}, 0},
		{"bad operator", "department_id=eq.", "department_id=equals.", []string{"line 17", `unknown operator "equals"`}, 0},
		{"several problems", "kind: user", "kind: robot, key_type: x", []string{"2 problems", `"robot"`, `"x"`}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := string(base)
			if !strings.Contains(src, tt.old) {
				t.Fatalf("fixture lacks %q", tt.old)
			}
			f, err := loadString(t, strings.Replace(src, tt.old, tt.new, 1))
			if err != nil {
				t.Fatal(err)
			}
			err = f.Validate()
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("Validate = %v, want Invalid", err)
			}
			msg := fault.As(err).Message
			for _, w := range tt.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if tt.wantsCount > 1 && strings.Count(msg, "\n") != tt.wantsCount {
				t.Errorf("message %q: want %d problem lines", msg, tt.wantsCount)
			}
		})
	}
}

func TestValidateBindingWithoutTemplatesSection(t *testing.T) {
	// Without a templates section, bindings are checked against the store
	// by Plan, not here.
	f, err := loadString(t, "org: a\nproject: b\nbindings:\n  - {role: r, templates: [elsewhere]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFilter(t *testing.T) {
	good := []string{
		"owner=eq.{identity}",
		"department_id=eq.{claims.department_id}",
		"space=eq.{space}&org=eq.{org}&project=eq.{project}",
		"status=in.(a,b)",
		"status=in.a,b",
		"deleted=is.null",
		"name=not.like.x*",
		`label=eq."{identity}"`,
		"n=bw.1,{claims.max-n}",
	}
	for _, f := range good {
		if err := CheckFilter(f); err != nil {
			t.Errorf("CheckFilter(%q) = %v", f, err)
		}
	}
	bad := []struct{ in, want string }{
		{"", "empty"},
		{"a=eq.1&", "empty term"},
		{"a=eq.1&&b=eq.2", "empty term"},
		{"owner", "not column=op.value"},
		{"=eq.1", "no column"},
		{"{identity}=eq.1", "cannot be a variable"},
		{"fc=eq.1", "reserved"},
		{"a=eq.{who}", "unknown variable {who}"},
		{"a=eq.{claims.}", "unknown variable"},
		{"a=eq.{claims.a.b}", "unknown variable"},
		{"a=eq.{identity", "'{' without '}'"},
		{"a=eq.{{identity}}", "'{' without '}'"},
		{"a=eq.identity}", "'}' without '{'"},
		{"a=zz.1", `unknown operator "zz"`},
		{"a=eq", "no value"},
		{"a=bw.1", "two values"},
		{`a=eq."x`, "unterminated quote"},
	}
	for _, tt := range bad {
		err := CheckFilter(tt.in)
		if fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, tt.want) {
			t.Errorf("CheckFilter(%q) = %v, want Invalid naming %q", tt.in, err, tt.want)
		}
	}
}

func FuzzCheckFilter(f *testing.F) {
	for _, s := range []string{"owner=eq.{identity}", "a=in.(1,2)&b=is.null", "a=eq.{claims.x}", "{", "a=eq.\"", "&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckFilter(s)
		if err != nil && fault.KindOf(err) != fault.Invalid {
			t.Fatalf("CheckFilter(%q) = %v, want nil or Invalid", s, err)
		}
	})
}

func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile(example); err == nil {
		f.Add(string(b))
	}
	f.Add("org: a\nproject: b\n")
	f.Add("org: [a\n")
	f.Add("---\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		file, err := Load(strings.NewReader(s))
		if err != nil {
			if k := fault.KindOf(err); k != fault.Invalid && k != fault.TooLarge {
				t.Fatalf("Load: %v", err)
			}
			return
		}
		_ = file.Validate()
	})
}
