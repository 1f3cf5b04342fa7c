package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/store"
)

// exampleYAML is the policy file of issue 3, shared with package policy.
func exampleYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func changeSeq(t *testing.T, dataDir string) int64 {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := st.ChangeSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const exampleApplied = `+ org demo
+ project demo
+ space main (mcp off, named by identity alice)
+ identity alice (user, space main, roles [hr-analyst], claims {"department_id":6})
+ template hr-read (3 rules)
+ binding hr-analyst -> [hr-read]
+ lock pg/public/audit_log -r--
+ scope hr-analyst on pg/public/employees where department_id=eq.{claims.department_id}
`

func TestApplyCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	file := writeFile(t, dir, "policy.yaml", exampleYAML(t))

	// A dry run on a data directory that does not exist creates nothing.
	out, errOut, code := cli(t, "apply", "-f", file, "--dry-run", "--data-dir", data)
	if code != 0 || out != exampleApplied+"(dry run: nothing was changed)\n" || errOut != "" {
		t.Fatalf("dry run: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("dry run created %s (%v)", data, err)
	}

	// Applying needs a data dir: only serve and init create one.
	if _, errOut, code := cli(t, "apply", "-f", file, "--data-dir", data); code != 1 || !strings.Contains(errOut, "no data dir at "+data) || !strings.Contains(errOut, "minimal init") {
		t.Fatalf("apply without a data dir: %d %s", code, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("a refused apply created %s (%v)", data, err)
	}
	if out, errOut, code := cli(t, "init", "--data-dir", data); code != 0 || !strings.Contains(out, "created data dir "+data) {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	out, errOut, code = cli(t, "apply", "-f", file, "--data-dir", data)
	if code != 0 || out != exampleApplied {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	seq := changeSeq(t, data)
	out, _, code = cli(t, "apply", "-f", file, "--data-dir", data)
	if code != 0 || out != "= nothing to change\n" {
		t.Fatalf("second apply: %d %q", code, out)
	}
	if changeSeq(t, data) != seq {
		t.Fatal("second apply moved the change counter")
	}

	// A dry run of a changed file prints the difference and writes nothing.
	changed := strings.Replace(exampleYAML(t), "roles: [hr-analyst]", "roles: [hr-analyst, auditor]", 1)
	changed = strings.Replace(changed, `mask: "-r--"`, `mask: "----"`, 1)
	changedFile := writeFile(t, dir, "changed.yaml", changed)
	out, errOut, code = cli(t, "apply", "-f", changedFile, "--dry-run", "--data-dir", data)
	want := "~ identity alice: roles [hr-analyst] -> [hr-analyst auditor]\n~ lock pg/public/audit_log: -r-- -> ----\n(dry run: nothing was changed)\n"
	if code != 0 || out != want {
		t.Fatalf("dry run of a change: %d\n%s\n%s", code, out, errOut)
	}
	if changeSeq(t, data) != seq {
		t.Fatal("dry run moved the change counter")
	}
	if out, _, _ := cli(t, "apply", "-f", file, "--data-dir", data); out != "= nothing to change\n" {
		t.Fatalf("after the dry run the store differs: %q", out)
	}

	// Standard input works as the file.
	cmd := exec.Command(binary, "apply", "-f", "-", "--data-dir", data)
	cmd.Stdin = strings.NewReader(changed)
	b, err := cmd.CombinedOutput()
	if err != nil || string(b) != strings.TrimSuffix(want, "(dry run: nothing was changed)\n") {
		t.Fatalf("apply -f -: %v\n%s", err, b)
	}
}

func TestPolicyShowRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// A bootstrapped store: demo/demo, space main, admin and agent.
	s := startServer(t, dir)
	s.stop(t)
	file := writeFile(t, t.TempDir(), "policy.yaml", exampleYAML(t))
	out, errOut, code := cli(t, "apply", "-f", file, "--data-dir", dir)
	if code != 0 || strings.Contains(out, "+ space") || strings.Contains(out, "+ org") ||
		!strings.Contains(out, "+ identity alice (user, space main, roles [hr-analyst]") {
		t.Fatalf("apply on a bootstrapped store: %d\n%s\n%s", code, out, errOut)
	}

	shown, errOut, code := cli(t, "policy", "show", "--project", "demo/demo", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("policy show: %d %s", code, errOut)
	}
	for _, want := range []string{
		"org: demo\n", "project: demo\n", "  - {name: main, mcp: true}\n",
		"  - name: admin\n", "  - name: agent\n    kind: mcp\n", "  - name: alice\n",
		"    claims: {department_id: 6}\n",
		"      - {object: pg/public/salaries, actions: [read, update], effect: deny}\n",
		"  - {role: hr-analyst, templates: [hr-read]}\n",
		"  - {object: pg/public/audit_log, mask: \"-r--\"}\n",
		"filter: 'department_id=eq.{claims.department_id}'",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("policy show lacks %q:\n%s", want, shown)
		}
	}
	showFile := writeFile(t, t.TempDir(), "shown.yaml", shown)
	seq := changeSeq(t, dir)
	if out, errOut, code := cli(t, "apply", "-f", showFile, "--data-dir", dir); code != 0 || out != "= nothing to change\n" {
		t.Fatalf("applying policy show's output: %d\n%s\n%s", code, out, errOut)
	}
	if changeSeq(t, dir) != seq {
		t.Fatal("applying policy show's output moved the change counter")
	}

	// Without ORG/, --project is a project of --org (default demo).
	if again, _, code := cli(t, "policy", "show", "--project", "demo", "--data-dir", dir); code != 0 || again != shown {
		t.Fatalf("--project demo: %d\n%s", code, again)
	}
	text, _, code := cli(t, "policy", "show", "--data-dir", dir, "--format", "text")
	if code != 0 || !strings.Contains(text, "identity alice (user, space main, roles [hr-analyst], key_type crud") ||
		!strings.Contains(text, "  3. deny [read update] on pg/public/salaries\n") {
		t.Fatalf("text: %d\n%s", code, text)
	}
}

func TestApplyCLIErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	example := exampleYAML(t)
	tests := []struct {
		name   string
		args   []string
		file   string // content for -f, when set
		code   int
		stderr []string
	}{
		{"unknown key", nil, strings.Replace(example, "kind: user", "kind: user, colour: red", 1), 1,
			[]string{"line 5", "colour"}},
		{"bad values", nil, strings.Replace(example, `mask: "-r--"`, `mask: "rw"`, 1) + "  - {role: r, object: pg, filter: \"a=eq.{who}\"}\n", 1,
			[]string{"2 problems", "line 15", `"rw"`, "line 18", "{who}"}},
		{"unknown template", nil, strings.Replace(example, "templates: [hr-read]", "templates: [hr-write]", 1), 1,
			[]string{`unknown template "hr-write"`}},
		{"not YAML", nil, "org: [demo\n", 1, []string{"not valid YAML"}},
		{"missing -f", []string{"apply"}, "", 2, []string{"-f FILE is required"}},
		{"missing file", []string{"apply", "-f", filepath.Join(dir, "nope.yaml")}, "", 1, []string{"nope.yaml"}},
		{"extra argument", []string{"apply", "-f", "x", "y"}, "", 2, []string{`unexpected argument "y"`}},
		{"policy without subcommand", []string{"policy"}, "", 2, []string{"policy"}},
		{"policy unknown subcommand", []string{"policy", "frob"}, "", 2, []string{`"frob"`}},
		{"show bad format", []string{"policy", "show", "--format", "json"}, "", 2, []string{"--format"}},
		{"show bad project", []string{"policy", "show", "--project", "a/b/c"}, "", 2, []string{"ORG/PROJECT"}},
		{"show without store", []string{"policy", "show"}, "", 1, []string{"no data dir at ", "--data-dir", "MINIMAL_DATA_DIR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = []string{"apply", "-f", writeFile(t, t.TempDir(), "p.yaml", tt.file)}
			}
			args = append(args, "--data-dir", data)
			out, errOut, code := cli(t, args...)
			if code != tt.code || out != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, tt.code, out, errOut)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("refused commands created %s (%v)", data, err)
	}
	// A project that does not exist in an existing store.
	if _, errOut, code := cli(t, "init", "--data-dir", data); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "apply", "-f", writeFile(t, dir, "ok.yaml", example), "--data-dir", data); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "policy", "show", "--project", "demo/other", "--data-dir", data); code != 1 || !strings.Contains(errOut, `"other"`) {
		t.Fatalf("unknown project: %d %s", code, errOut)
	}
}
