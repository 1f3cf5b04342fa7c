package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	_ "github.com/littlebitlabs/minimal/dialects/ch" // ClickHouse
	_ "github.com/littlebitlabs/minimal/dialects/ma" // MariaDB/MySQL
	_ "github.com/littlebitlabs/minimal/dialects/mi" // mini-app tables
	_ "github.com/littlebitlabs/minimal/dialects/ms" // Microsoft SQL Server
	_ "github.com/littlebitlabs/minimal/dialects/pg" // PostgreSQL

	"github.com/littlebitlabs/minimal/fault"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `minimal — data access gateway

Usage:
  minimal serve   [--data-dir DIR] [--rest-addr ADDR] [--mcp-addr ADDR] [--session-idle 30m] [limits…]
  minimal mcp     --stdio --token-file PATH                     (a gateway identity over stdin/stdout)
  minimal mcp     --stdio | --http [--bind 127.0.0.1:8484]      (mini-app-mcp drop-in: MINI_APP_* directories)
  minimal token   mint --identity NAME [--org O --project P] [--roles r1,r2] [--key-type -r--] [--ttl 24h]
  minimal token   revoke JTI | --token TOKEN | --token-file PATH
  minimal db      add|list|remove|test …
  minimal space   mcp --org O --project P --space S on|off
  minimal session journal [--json] ID
  minimal apply   -f policy.yaml [--dry-run]
  minimal policy  show [--project ORG/PROJECT] [--format yaml|text]
  minimal policy  explain --identity NAME --method GET --path /minimal/api/rest/auto/v1/… [--body JSON]
  minimal audit   [--project ORG/PROJECT] [--limit 50] [--identity NAME] [--outcome ok|error|CODE] [--json]
  minimal migrate [--data-dir DIR]
  minimal version

Every subcommand takes --data-dir (env MINIMAL_DATA_DIR, default ./.minimal).
Run 'minimal COMMAND -h' for a command's flags.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stderr)
	case "token":
		err = cmdToken(ctx, args[1:], stdout, stderr)
	case "db":
		err = cmdDB(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, args[1:], os.Stdin, stdout, stderr)
	case "space":
		err = cmdSpace(ctx, args[1:], stdout, stderr)
	case "session":
		err = cmdSession(ctx, args[1:], stdout, stderr)
	case "apply":
		err = cmdApply(ctx, args[1:], stdout, stderr)
	case "policy":
		err = cmdPolicy(ctx, args[1:], stdout, stderr)
	case "audit":
		err = cmdAudit(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "minimal", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "minimal: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "minimal:", ue.msg)
			return 2
		}
		fmt.Fprintln(stderr, "minimal:", describe(err))
		return 1
	}
	return 0
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// describe renders an error for the terminal: the caller-safe message plus
// the cause.
func describe(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return strings.ToLower(fe.Kind.String()) + ": " + err.Error()
	}
	return err.Error()
}

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("minimal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func dataDirFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("MINIMAL_DATA_DIR")
	if def == "" {
		def = "./.minimal"
	}
	return fs.String("data-dir", def, "data directory (env MINIMAL_DATA_DIR)")
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("MINIMAL_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
