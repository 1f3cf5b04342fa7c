package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/littlebitlabs/minimal/dialects/ch" // ClickHouse
	_ "github.com/littlebitlabs/minimal/dialects/ma" // MariaDB/MySQL
	_ "github.com/littlebitlabs/minimal/dialects/mi" // mini-app tables
	_ "github.com/littlebitlabs/minimal/dialects/ms" // Microsoft SQL Server
	_ "github.com/littlebitlabs/minimal/dialects/pg" // PostgreSQL

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/observe"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the process exit code: 0, 1
// when the command failed, 2 for a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		more, err := cmdHelp(args[1:], stdout)
		if err != nil || more == nil {
			return exitCode(err, stdout, stderr)
		}
		args = more
	}
	if slices.Contains(groups, args[0]) {
		if done, err := dispatchGroup(args[0], args[1:], stdout); done {
			return exitCode(err, stdout, stderr)
		}
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stderr)
	case "init":
		err = cmdInit(ctx, args[1:], stdout, stderr)
	case "token":
		err = cmdToken(ctx, args[1:], stdout, stderr)
	case "db":
		err = cmdDB(ctx, args[1:], os.Stdin, stdout, stderr)
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
	case "console-link":
		err = cmdConsoleLink(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		err = cmdVersion(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "minimal: unknown command %q (run 'minimal help' for the list)\n", args[0])
		return 2
	}
	return exitCode(err, stdout, stderr)
}

// exitCode reports err and returns the exit code: 0 (a help request
// prints the command's usage to stdout), 2 for a usage error, 1 otherwise.
func exitCode(err error, stdout, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var hr helpRequest
	if errors.As(err, &hr) {
		c, _ := find(hr.fs.Name())
		writeCommand(stdout, c, hr.fs)
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

// cmdVersion prints the version.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version: unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(stdout, "minimal", version)
	return nil
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

func dataDirFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("MINIMAL_DATA_DIR")
	if def == "" {
		def = "./.minimal"
	}
	return fs.String("data-dir", def, "data directory (env MINIMAL_DATA_DIR)")
}

// envLogFormat is the environment default of --log-format.
const envLogFormat = "MINIMAL_LOG_FORMAT"

// envLogLevel sets the level of the process's logger: debug, info (the
// default), warn or error. At warn the per-request lines are not written.
const envLogLevel = "MINIMAL_LOG_LEVEL"

// logFormatFlag defines --log-format (json, the default, or text for
// people); the returned function, called after parsing, makes the
// process's one logger (see newLogger) and the function that writes out
// what it buffers, to be called when the command ends.
func logFormatFlag(fs *flag.FlagSet, stderr io.Writer) func() (*slog.Logger, func(), error) {
	def := os.Getenv(envLogFormat)
	if def == "" {
		def = "json"
	}
	format := fs.String("log-format", def, "json (one object a line) or text (key=value, for people) (env "+envLogFormat+")")
	return func() (*slog.Logger, func(), error) {
		if *format != "json" && *format != "text" {
			return nil, nil, usagef("%s: --log-format must be json or text, not %q", fs.Name(), *format)
		}
		var level slog.Level
		if v := os.Getenv(envLogLevel); v != "" {
			if err := level.UnmarshalText([]byte(v)); err != nil {
				return nil, nil, usagef("%s: %s must be debug, info, warn or error, not %q", fs.Name(), envLogLevel, v)
			}
		}
		l, closeLog := newLogger(stderr, *format, level)
		return l, closeLog, nil
	}
}

// logFlushInterval is how long a log line may wait in the buffer.
const logFlushInterval = 100 * time.Millisecond

// newLogger makes the process's one logger at level and sets it as slog's
// default, so that every package (and the standard log package) writes
// through it: one format on every line, and the request id (and trace id)
// of the context on every line logged with one (observe.LogHandler). Lines
// are buffered (observe.LogWriter): a line at warn or above is written at
// once with what waited before it, others within logFlushInterval. The
// returned function writes out the buffer; later lines go straight to w.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, func()) {
	lw := observe.NewLogWriter(w, logFlushInterval)
	// observe.JSONHandler writes what slog.JSONHandler writes, faster.
	var h slog.Handler = observe.NewJSONHandler(lw, level)
	if format == "text" {
		h = slog.NewTextHandler(lw, &slog.HandlerOptions{Level: level})
	}
	l := slog.New(observe.LogHandler(flushOnWarn{h, lw}))
	slog.SetDefault(l)
	return l, func() { _ = lw.Close() }
}

// flushOnWarn writes out the log buffer after each line at warn level or
// above, so that trouble is on stderr as it happens.
type flushOnWarn struct {
	slog.Handler
	lw *observe.LogWriter
}

func (f flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := f.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		_ = f.lw.Flush()
	}
	return err
}

func (f flushOnWarn) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushOnWarn{f.Handler.WithAttrs(attrs), f.lw}
}

func (f flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{f.Handler.WithGroup(name), f.lw}
}
