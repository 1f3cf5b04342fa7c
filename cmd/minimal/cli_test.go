package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cliRun is one run of the binary: its output and exit code.
type cliRun struct {
	stdout, stderr string
	code           int
	// served is set when the command started serving and was stopped
	// with SIGTERM (serve, or mcp over HTTP, given valid arguments).
	served bool
}

// lockedBuf is a bytes.Buffer written by the process and read by the test.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runIn runs the binary in dir with env added to the test's environment
// (without MINIMAL_DATA_DIR and MINIMAL_DSN unless env sets them) and
// stdin as its standard input. A command that starts serving is stopped
// with SIGTERM once it logs "serving MCP"; one still running after 30 s
// fails the test.
func runIn(t *testing.T, dir string, env []string, stdin string, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MINIMAL_DATA_DIR=") && !strings.HasPrefix(kv, "MINIMAL_DSN=") && !strings.HasPrefix(kv, "MINIMAL_CONTROL_DSN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "MINIMAL_REST_ADDR=127.0.0.1:0", "MINIMAL_MCP_ADDR=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var so, se lockedBuf
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var r cliRun
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if !r.served && strings.Contains(se.String(), "serving MCP") {
				r.served = true
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("minimal %q did not finish in 30 s:\n%s", args, se.String())
		}
	}
	r.stdout, r.stderr = so.String(), se.String()
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// noPanic fails the test when a run crashed instead of answering.
func noPanic(t *testing.T, r cliRun, args []string) {
	t.Helper()
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") || r.code > 2 || r.code < 0 {
		t.Fatalf("minimal %q crashed (exit %d):\n%s", args, r.code, r.stderr)
	}
}

// flagsOf reads a command's flag names from its --help.
func flagsOf(help string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(help, -1) {
		out = append(out, m[1])
	}
	return out
}

// cliFixture is a data dir bootstrapped by serve, with what valid
// arguments of every command need.
type cliFixture struct {
	work, data, agentToken, policyFile, dsnFile string
}

func newCLIFixture(t *testing.T) cliFixture {
	t.Helper()
	work := t.TempDir()
	f := cliFixture{work: work, data: filepath.Join(work, "data")}
	s := startServer(t, f.data)
	s.stop(t)
	f.agentToken = filepath.Join(f.data, "agent.token")
	f.policyFile = writeFile(t, work, "policy.yaml", exampleYAML(t))
	f.dsnFile = writeFile(t, work, "pg.dsn", os.Getenv("MINIMAL_TEST_PG_DSN")+"\n")
	return f
}

// validArgs are arguments with which each command does its work on the
// fixture's data dir (given with MINIMAL_DATA_DIR).
func (f cliFixture) validArgs(name string) []string {
	notes := "/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=1&pg=0"
	return map[string][]string{
		"mcp":             {"--stdio", "--token-file", f.agentToken},
		"token mint":      {"--identity", "admin"},
		"token revoke":    {"0190f3c2-7d1e-7b2a-9c4d-2f1e0a9b8c7d"},
		"db add":          {"--type", "pg", "--schema", "public", "--dsn-file", f.dsnFile},
		"db set-dsn":      {"--type", "pg", "--schema", "public", "--dsn-file", f.dsnFile},
		"db remove":       {"--type", "pg", "--schema", "nothing"},
		"db test":         {"--type", "pg", "--schema", "public", "--dsn-file", f.dsnFile},
		"db reload":       {"--type", "pg", "--schema", "public"},
		"session journal": {"0190f3c2-7d1e-7b2a-9c4d-2f1e0a9b8c7d"},
		"apply":           {"-f", f.policyFile, "--dry-run"},
		"policy explain":  {"--identity", "admin", "--path", notes},
		"help":            {"token"},
		"console-link":    {"--identity", "admin"},
	}[name]
}

// garbage are flag values and arguments no command expects.
var garbage = []string{"", "-1", "pg/public/employees?ps=10&pg=0", "%zz?&/..", "\x7f☃'\"\\", strings.Repeat("x", 5000)}

// TestCLIEveryCommand runs every command of 'minimal help' with --help,
// without arguments and with garbage — an unknown flag, a stray argument,
// and each of its flags given each garbage value on top of valid
// arguments — and asserts the exit code (0 done, 1 failed, 2 usage), that
// nothing panics, and that every failure is one "minimal: " message
// naming what was wrong.
func TestCLIEveryCommand(t *testing.T) {
	f := newCLIFixture(t)
	inData := []string{"MINIMAL_DATA_DIR=" + f.data}

	// 'minimal help' lists every command, and every group answers --help.
	list := runIn(t, f.work, nil, "", "help")
	if list.code != 0 {
		t.Fatalf("help: %d %s", list.code, list.stderr)
	}
	for _, c := range commands {
		if !strings.Contains(list.stdout, "minimal "+c.name+" ") {
			t.Errorf("'minimal help' does not list %q:\n%s", c.name, list.stdout)
		}
	}
	for _, g := range groups {
		for _, h := range []string{"--help", "-h", "help"} {
			r := runIn(t, f.work, nil, "", g, h)
			if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Usage: minimal "+g+" SUBCOMMAND") {
				t.Errorf("%s %s: %d\n%s%s", g, h, r.code, r.stdout, r.stderr)
			}
			for _, sub := range subcommands(g) {
				if !strings.Contains(r.stdout, "  "+sub+" ") || !strings.Contains(r.stdout, "e.g. minimal "+g+" "+sub) {
					t.Errorf("%s --help lacks %s and its example:\n%s", g, sub, r.stdout)
				}
			}
		}
		if r := runIn(t, f.work, nil, "", g); r.code != 2 || !strings.Contains(r.stderr, "minimal: "+g+": say ") {
			t.Errorf("%s without a subcommand: %d %q", g, r.code, r.stderr)
		}
		if r := runIn(t, f.work, nil, "", g, "frob"); r.code != 2 || !strings.Contains(r.stderr, `unknown subcommand "frob"`) {
			t.Errorf("%s frob: %d %q", g, r.code, r.stderr)
		}
	}
	if r := runIn(t, f.work, nil, "", "frob"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "frob"`) {
		t.Errorf("frob: %d %q", r.code, r.stderr)
	}
	if r := runIn(t, f.work, nil, ""); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no command: %d %q", r.code, r.stderr)
	}

	// Without arguments, with an absent data dir: a usage error, or the
	// data dir named; nothing is created but by init and serve.
	absent := filepath.Join(f.work, "absent")
	noArgs := map[string]struct {
		code int
		says string
	}{
		"serve": {0, "serving REST"}, "init": {0, "created data dir " + absent},
		"mcp":        {2, "--stdio or --http is required"},
		"token mint": {2, "--identity is required"}, "token revoke": {2, "give a JTI"},
		"db add": {2, "--type and --schema are required"}, "db set-dsn": {2, "--type and --schema are required"},
		"db remove": {2, "--type and --schema are required"}, "db test": {2, "--type and --schema are required"},
		"db reload": {2, "--type and --schema are required"},
		"db list":   {1, "no data dir at " + absent}, "space mcp": {1, "no data dir at " + absent},
		"session journal": {2, "give one session id"}, "apply": {2, "-f FILE is required"},
		"policy show": {1, "no data dir at " + absent}, "policy explain": {2, "--identity and --path are required"},
		"audit": {1, "no data dir at " + absent}, "migrate": {1, "no data dir at " + absent},
		"version": {0, "minimal "}, "help": {0, "Usage:"},
		"console-link": {2, "--identity is required"},
	}
	for _, c := range commands {
		want, ok := noArgs[c.name]
		if !ok {
			t.Errorf("no expectation for %q without arguments", c.name)
			continue
		}
		if c.name == "init" || c.name == "serve" {
			continue // below, once the others have created nothing
		}
		args := strings.Fields(c.name)
		r := runIn(t, f.work, []string{"MINIMAL_DATA_DIR=" + absent}, "", args...)
		noPanic(t, r, args)
		if r.code != want.code || !strings.Contains(r.stdout+r.stderr, want.says) {
			t.Errorf("%s without arguments: exit %d (want %d), stdout %q, stderr %q (want %q)", c.name, r.code, want.code, r.stdout, r.stderr, want.says)
		}
		if r.code == 1 && !strings.Contains(r.stderr, "--data-dir") {
			t.Errorf("%s: the refusal does not say --data-dir: %q", c.name, r.stderr)
		}
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Fatalf("a command other than init or serve created %s (%v)", absent, err)
	}
	for _, name := range []string{"init", "serve"} {
		r := runIn(t, f.work, []string{"MINIMAL_DATA_DIR=" + absent}, "", name)
		if r.code != noArgs[name].code || !strings.Contains(r.stdout+r.stderr, noArgs[name].says) {
			t.Errorf("%s without arguments: %d %q %q", name, r.code, r.stdout, r.stderr)
		}
	}

	for _, c := range commands {
		args := strings.Fields(c.name)
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			// --help, -h and 'minimal help NAME': usage, an example and the
			// flags on stdout, exit 0.
			help := runIn(t, f.work, nil, "", append(args, "--help")...)
			if help.code != 0 || help.stderr != "" || !strings.Contains(help.stdout, "Usage: minimal "+c.name) ||
				!strings.Contains(help.stdout, "Example:\n  minimal "+c.name) {
				t.Fatalf("--help: %d\n%s%s", help.code, help.stdout, help.stderr)
			}
			if r := runIn(t, f.work, nil, "", append(args, "-h")...); r.code != 0 || r.stdout != help.stdout {
				t.Errorf("-h differs from --help: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if c.name != "help" {
				if r := runIn(t, f.work, nil, "", append([]string{"help"}, args...)...); r.code != 0 || r.stdout != help.stdout {
					t.Errorf("'minimal help %s' differs from --help: %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
				}
			}

			// An unknown flag, a stray argument.
			r := runIn(t, f.work, inData, "", append(args, "--no-such-flag")...)
			if c.name == "help" {
				r = runIn(t, f.work, inData, "", "help", "no-such-command")
			}
			noPanic(t, r, args)
			if r.code != 2 || !strings.HasPrefix(r.stderr, "minimal: ") || !(strings.Contains(r.stderr, "-no-such-flag") || strings.Contains(r.stderr, "no-such-command")) {
				t.Errorf("unknown flag: exit %d, stderr %q", r.code, r.stderr)
			}
			if c.name != "token revoke" && c.name != "session journal" && c.name != "help" {
				stray := append(append(args, f.validArgs(c.name)...), "stray-argument")
				r := runIn(t, f.work, inData, "", stray...)
				noPanic(t, r, stray)
				if r.code != 2 || !strings.Contains(r.stderr, "stray-argument") {
					t.Errorf("stray argument: exit %d, stderr %q", r.code, r.stderr)
				}
			}

			// Each flag, each garbage value, on top of valid arguments. What
			// the valid arguments alone answer (the second time: a database
			// registered once is a conflict after) is the answer of a
			// garbage value the command takes.
			valid := append(append([]string{}, args...), f.validArgs(c.name)...)
			runIn(t, f.work, inData, "", valid...)
			base := runIn(t, f.work, inData, "", valid...)
			for _, flag := range flagsOf(help.stdout) {
				for _, v := range garbage {
					run := append(append(append([]string{}, args...), f.validArgs(c.name)...), "--"+flag+"="+v)
					r := runIn(t, f.work, inData, "", run...)
					noPanic(t, r, run)
					if r.code == 0 || (r.code == base.code && r.stderr == base.stderr) {
						continue // a value the command takes
					}
					// The last line is the command's one message (a server
					// may have logged before it failed).
					lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
					last := lines[len(lines)-1]
					msg := strings.TrimPrefix(last, "minimal: ")
					quoted := strconv.Quote(v)
					names := strings.Contains(msg, flag) || (v != "" && (strings.Contains(msg, v) || strings.Contains(msg, quoted[1:len(quoted)-1])))
					if msg == last || !names {
						t.Errorf("--%s=%.40q: exit %d, last line %.400q: want one message naming the flag or its value", flag, v, r.code, last)
					}
				}
			}
		})
	}
}
