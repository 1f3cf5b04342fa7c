package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one command or subcommand of the CLI as its help shows it.
type command struct {
	// name is the command's words after "minimal": "serve", "token mint".
	name string
	// args is the synopsis of its flags and arguments.
	args string
	// about says what it does.
	about string
	// example is one command line that works as written.
	example string
}

// commands is every command, in the order 'minimal help' lists them. The
// CLI test runs each of them with --help, without arguments and with
// garbage.
var commands = []command{
	{"serve", "[--data-dir DIR] [--rest-addr ADDR] [--mcp-addr ADDR] [--log-format json|text] [limits…]",
		"Run the gateway: REST (Auto API, admin API, OpenAPI) on --rest-addr, MCP on --mcp-addr. Creates and bootstraps the data dir on first start (org demo, project demo, admin.token and agent.token).",
		"minimal serve --data-dir ./.minimal --rest-addr 127.0.0.1:8080"},
	{"init", "[--data-dir DIR]",
		"Create an empty data dir: the control-plane store and its master key. 'minimal serve' does the same on first start; every other command needs an existing one.",
		"minimal init --data-dir /var/lib/minimal"},
	{"mcp", "--stdio --token-file PATH | --stdio | --http [--bind 127.0.0.1:8484]",
		"Serve the MCP tools to a local agent: with --token-file as that gateway identity over stdin/stdout; without, the mini-app-mcp drop-in over MINI_APP_* directories (stdio or --http).",
		"minimal mcp --stdio --token-file .minimal/agent.token"},
	{"token mint", "--identity NAME [--org O --project P] [--roles r1,r2] [--key-type -r--] [--ttl 24h|30d] [--json]",
		"Mint an access token for an identity, never more than it holds.",
		"minimal token mint --identity agent --roles admin --ttl 30d --json"},
	{"token revoke", "JTI | --token TOKEN | --token-file PATH",
		"Revoke a token and every token minted from it; running servers refuse them within seconds.",
		"minimal token revoke --token-file .minimal/agent.token"},
	{"db add", "--type T --schema S (--dsn-file PATH | --dsn - | env MINIMAL_DSN | --dsn DSN) [--org O --project P] [--no-test]",
		"Register a database after a connection test. Prefer --dsn-file, --dsn - (standard input) or MINIMAL_DSN: a --dsn value shows in ps and the shell history.",
		"minimal db add --type pg --schema public --dsn-file /run/secrets/pg.dsn"},
	{"db set-dsn", "--type T --schema S (--dsn-file PATH | --dsn - | env MINIMAL_DSN | --dsn DSN) [--org O --project P] [--no-test]",
		"Replace the connection string of a registered database (after a connection test); running servers reconnect with it.",
		"minimal db set-dsn --type ma --schema shop --dsn - < shop.dsn"},
	{"db list", "[--org O --project P]",
		"List a project's databases (connection strings are never shown).",
		"minimal db list --org demo --project demo"},
	{"db remove", "--type T --schema S [--org O --project P]",
		"Unregister a database.",
		"minimal db remove --type pg --schema public"},
	{"db test", "--type T --schema S [--dsn-file PATH | --dsn - | env MINIMAL_DSN | --dsn DSN] [--org O --project P]",
		"Run the connection test: on the given connection string, else on the registered one.",
		"minimal db test --type pg --schema public"},
	{"db reload", "--type T --schema S [--org O --project P]",
		"Make every running server read the database's tables and columns again now (after a migration), instead of within the refresh interval.",
		"minimal db reload --type pg --schema public"},
	{"space mcp", "[--org O --project P] [--space S] [on|off]",
		"Switch the MCP face of a space on or off (without on|off: print its state).",
		"minimal space mcp --space main off"},
	{"session journal", "[--json] ID",
		"Print an AI session and every call journaled in it.",
		"minimal session journal --json 0190f3c2-7d1e-7b2a-9c4d-2f1e0a9b8c7d"},
	{"apply", "-f policy.yaml [--dry-run]",
		"Make a project match a policy file ('-f -' reads standard input); prints one line per change.",
		"minimal apply -f policy.yaml --dry-run"},
	{"policy show", "[--project ORG/PROJECT] [--format yaml|text]",
		"Print a project's effective policy, as a file 'minimal apply' takes back unchanged.",
		"minimal policy show --project demo/demo --format text"},
	{"policy explain", "--identity NAME [--method GET] --path /minimal/api/rest/auto/v1/… [--body JSON]",
		"Show how a request by an identity would fare: each gate's decision, the columns and the SQL; nothing runs.",
		"minimal policy explain --identity agent --path '/minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0'"},
	{"audit", "[--project ORG/PROJECT] [--limit 50] [--identity NAME] [--outcome ok|error|CODE] [--since 1h] [--json]",
		"Print a project's audit log, newest first.",
		"minimal audit --project demo/demo --outcome error --since 1h"},
	{"console-link", "--identity NAME [--org O --project P] [--roles r1,r2] [--key-type -r--] [--ttl 1h] [--url http://HOST:PORT]",
		"Print a web console URL with a one-time sign-in code (valid 5 minutes, once) for a short-lived token of the identity.",
		"minimal console-link --identity admin --ttl 2h"},
	{"migrate", "[--data-dir DIR]",
		"Apply pending migrations to an existing control-plane store and print its schema version.",
		"minimal migrate --data-dir /var/lib/minimal"},
	{"version", "", "Print the version.", "minimal version"},
	{"help", "[COMMAND [SUBCOMMAND]]", "Print this list, or a command's usage.", "minimal help token mint"},
}

// groups are the commands that only dispatch to subcommands.
var groups = []string{"token", "db", "space", "session", "policy"}

// find returns the command named name.
func find(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// subcommands lists the subcommand words of a group.
func subcommands(group string) []string {
	var out []string
	for _, c := range commands {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			out = append(out, sub)
		}
	}
	return out
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// writeUsage prints the list of every command.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "minimal — data access gateway\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  minimal %-16s %s\n", c.name, c.args)
	}
	fmt.Fprint(w, `
Every command but version and help takes --data-dir (env MINIMAL_DATA_DIR, default ./.minimal).
Only serve and init create a data dir; the others need an existing one.
Run 'minimal COMMAND --help' (or 'minimal help COMMAND') for a command's flags and an example.
`)
}

// writeCommand prints one command's usage, what it does, an example and,
// when fs is set, its flags.
func writeCommand(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: minimal %s %s\n\n%s\n\nExample:\n  %s\n", c.name, c.args, c.about, c.example)
	if fs == nil {
		return
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// writeGroup prints a group's subcommands with their examples.
func writeGroup(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: minimal %s SUBCOMMAND [flags]\n\nSubcommands:\n", group)
	for _, sub := range subcommands(group) {
		c, _ := find(group + " " + sub)
		fmt.Fprintf(w, "  %-9s %s\n            %s\n            e.g. %s\n", sub, c.args, c.about, c.example)
	}
	fmt.Fprintf(w, "\nRun 'minimal %s SUBCOMMAND --help' for its flags.\n", group)
}

// helpRequest is the error of a flag set given -h or --help: run prints
// the command's usage to standard output and exits 0.
type helpRequest struct{ fs *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }

// newFlags makes the flag set of a command (name as in commands). It
// prints nothing itself: parseFlags turns its errors into usage errors and
// -h/--help into a helpRequest.
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a command's arguments, flags before, between or after
// its positional arguments (after "--" everything is positional): -h or
// --help is a helpRequest, a flag error a usage error naming the command
// and the flag. fs.Args() are then the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return helpRequest{fs}
		case err != nil:
			return usagef("%s: %v (see 'minimal %s --help')", fs.Name(), err, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// dispatchGroup handles a group's arguments before its subcommand runs:
// help for the group, or a usage error for a missing or unknown
// subcommand. It returns done when it has answered.
func dispatchGroup(group string, args []string, stdout io.Writer) (done bool, err error) {
	subs := subcommands(group)
	switch {
	case len(args) == 0:
		return true, usagef("%s: say %s (see 'minimal %s --help')", group, strings.Join(subs, ", "), group)
	case isHelp(args[0]):
		writeGroup(stdout, group)
		return true, nil
	case !slices.Contains(subs, args[0]):
		return true, usagef("%s: unknown subcommand %q (%s; see 'minimal %s --help')", group, args[0], strings.Join(subs, ", "), group)
	}
	return false, nil
}

// cmdHelp answers 'minimal help [COMMAND [SUBCOMMAND]]'.
func cmdHelp(args []string, stdout io.Writer) ([]string, error) {
	switch {
	case len(args) == 0:
		writeUsage(stdout)
		return nil, nil
	case len(args) == 1 && (isHelp(args[0]) || args[0] == "help"):
		c, _ := find("help")
		writeCommand(stdout, c, nil)
		return nil, nil
	case slices.Contains(groups, args[0]) && len(args) == 1:
		writeGroup(stdout, args[0])
		return nil, nil
	case len(args) > 2:
		return nil, usagef("help: give a command and at most one subcommand, not %q", strings.Join(args, " "))
	}
	if _, ok := find(strings.Join(args, " ")); !ok {
		return nil, usagef("help: unknown command %q (run 'minimal help' for the list)", strings.Join(args, " "))
	}
	// The command's own --help prints its flags.
	return append(slices.Clone(args), "--help"), nil
}
