package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/store"
)

// operator is the trust of every DSN given to or tested by `minimal db`:
// whoever runs it holds the data dir, so its connection strings may name
// files of the host and any database host.
var operator = dialects.Trust{Operator: true}

func cmdDB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("db: say add, list, remove or test")
	}
	fs := newFlags("db "+args[0], stderr)
	dataDir := dataDirFlag(fs)
	org := fs.String("org", "demo", "org name")
	project := fs.String("project", "demo", "project name")
	var typ, schema, dsn *string
	var skipTest *bool
	switch args[0] {
	case "add", "remove", "test":
		typ = fs.String("type", "", "database type: "+fmt.Sprint(dialects.Types()))
		schema = fs.String("schema", "", "schema to expose")
		if args[0] == "add" {
			dsn = fs.String("dsn", "", "the driver's connection string")
			skipTest = fs.Bool("no-test", false, "register without a connection test")
		}
	case "list":
	default:
		return usagef("db: unknown subcommand %q (add, list, remove, test)", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if typ != nil && (*typ == "" || *schema == "") {
		return usagef("db %s: --type and --schema are required", args[0])
	}
	st, err := store.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	_, proj, err := resolveProject(ctx, st, *org, *project)
	if err != nil {
		return err
	}
	switch args[0] {
	case "add":
		if *dsn == "" {
			return usagef("db add: --dsn is required")
		}
		if !*skipTest {
			if err := dialects.Probe(ctx, *typ, dialects.Config{DSN: *dsn, Schema: *schema}, operator); err != nil {
				return err
			}
		}
		d, err := st.AddDatabase(ctx, store.Database{ProjectID: proj.ID, Type: *typ, Schema: *schema, DSN: *dsn})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "registered %s/%s in %s/%s (id %s)\n", d.Type, d.Schema, *org, *project, d.ID)
	case "remove":
		if err := st.RemoveDatabase(ctx, proj.ID, *typ, *schema); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s/%s from %s/%s\n", *typ, *schema, *org, *project)
	case "test":
		dbs, err := st.DatabasesOf(ctx, proj.ID)
		if err != nil {
			return err
		}
		for _, d := range dbs {
			if d.Type == *typ && d.Schema == *schema {
				if err := dialects.Probe(ctx, d.Type, dialects.Config{DSN: d.DSN, Schema: d.Schema}, operator); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "ok: %s/%s answers\n", d.Type, d.Schema)
				return nil
			}
		}
		return fmt.Errorf("no database %s/%s in %s/%s", *typ, *schema, *org, *project)
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
