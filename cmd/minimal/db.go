package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/store"
)

// operator is the trust of every DSN given to or tested by `minimal db`:
// whoever runs it holds the data dir, so its connection strings may name
// files of the host and any database host.
var operator = dialects.Trust{Operator: true}

// envDSN is the environment source of a connection string for db add,
// db set-dsn and db test, read when neither --dsn nor --dsn-file is given.
const envDSN = "MINIMAL_DSN"

// dsnSource is the flags that give a connection string without putting it
// on the command line: --dsn-file PATH, --dsn - (standard input) and env
// MINIMAL_DSN; --dsn VALUE works too but shows in ps and shell history.
type dsnSource struct{ dsn, file *string }

func dsnFlags(fs interface {
	String(name, value, usage string) *string
}) dsnSource {
	return dsnSource{
		dsn:  fs.String("dsn", "", "the driver's connection string, or - to read it from standard input (a value here shows in ps and shell history: prefer --dsn-file, - or env "+envDSN+")"),
		file: fs.String("dsn-file", "", "a file holding the connection string (its surrounding white space is ignored)"),
	}
}

// read returns the connection string given, and "" when none is.
func (d dsnSource) read(cmd string, stdin io.Reader) (string, error) {
	if *d.dsn != "" && *d.file != "" {
		return "", usagef("%s: give --dsn or --dsn-file, not both", cmd)
	}
	var raw []byte
	var err error
	switch {
	case *d.file != "":
		if raw, err = os.ReadFile(*d.file); err != nil {
			return "", usagef("%s: --dsn-file: %v", cmd, err)
		}
	case *d.dsn == "-":
		if raw, err = io.ReadAll(io.LimitReader(stdin, 64<<10)); err != nil {
			return "", fmt.Errorf("%s: read the DSN from standard input: %w", cmd, err)
		}
	case *d.dsn != "":
		return *d.dsn, nil
	default:
		return os.Getenv(envDSN), nil
	}
	s := strings.TrimSpace(string(raw))
	if s == "" {
		from := "standard input"
		if *d.file != "" {
			from = *d.file
		}
		return "", usagef("%s: the connection string read from %s is empty", cmd, from)
	}
	return s, nil
}

func cmdDB(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sub := args[0]
	if sub == "reload" {
		return cmdDBReload(ctx, args[1:], stdout, stderr)
	}
	cmd := "db " + sub
	fs := newFlags(cmd, stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	var typ, schema *string
	var src dsnSource
	var skipTest *bool
	if sub != "list" {
		typ = fs.String("type", "", "database type: "+strings.Join(dialects.Types(), ", "))
		schema = fs.String("schema", "", "schema to expose")
	}
	if sub == "add" || sub == "set-dsn" || sub == "test" {
		src = dsnFlags(fs)
	}
	if sub == "add" || sub == "set-dsn" {
		skipTest = fs.Bool("no-test", false, "store it without a connection test")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	if typ != nil && (*typ == "" || *schema == "") {
		return usagef("%s: --type and --schema are required", cmd)
	}
	var dsn string
	if src.dsn != nil {
		var err error
		if dsn, err = src.read(cmd, stdin); err != nil {
			return err
		}
		if dsn == "" && sub != "test" {
			return usagef("%s: give the connection string with --dsn-file PATH, --dsn - (standard input) or env %s", cmd, envDSN)
		}
	}
	st, org, project, proj, err := ref.open(ctx, cmd, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	probe := func() error {
		if skipTest != nil && *skipTest {
			return nil
		}
		n, err := dialects.ProbeTables(ctx, *typ, dialects.Config{DSN: dsn, Schema: *schema}, operator)
		if err == nil && n == 0 {
			fmt.Fprintf(stderr, "warning: %s/%s: %s\n", *typ, *schema, dialects.NoTablesWarning)
		}
		return err
	}
	switch sub {
	case "add":
		if err := probe(); err != nil {
			return err
		}
		d, err := st.AddDatabase(ctx, store.Database{ProjectID: proj.ID, Type: *typ, Schema: *schema, DSN: dsn})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "registered %s/%s in %s/%s (id %s)\n", d.Type, d.Schema, org, project, d.ID)
	case "set-dsn":
		if _, err := st.Database(ctx, proj.ID, *typ, *schema); err != nil {
			return err
		}
		if err := probe(); err != nil {
			return err
		}
		if _, err := st.SetDatabaseDSN(ctx, proj.ID, *typ, *schema, dsn); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "replaced the connection string of %s/%s in %s/%s\n", *typ, *schema, org, project)
	case "remove":
		if err := st.RemoveDatabase(ctx, proj.ID, *typ, *schema); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s/%s from %s/%s\n", *typ, *schema, org, project)
	case "test":
		which := "the given connection string"
		if dsn == "" {
			d, err := st.Database(ctx, proj.ID, *typ, *schema)
			if err != nil {
				return err
			}
			dsn, which = d.DSN, "the registered connection string"
		}
		if err := probe(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "ok: %s/%s answers (%s)\n", *typ, *schema, which)
	case "list":
		dbs, err := st.DatabasesOf(ctx, proj.ID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TYPE\tSCHEMA\tID\tREGISTERED")
		for _, d := range dbs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Type, d.Schema, d.ID, d.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	return nil
}
