package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// cmdDBReload is `minimal db reload`: the database's registration is
// touched in the store (store.TouchDatabase), and every server that
// follows the store reads its tables again within a second, keeping its
// connections.
func cmdDBReload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const cmd = "db reload"
	fs := newFlags(cmd, stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	typ := fs.String("type", "", "database type")
	schema := fs.String("schema", "", "schema of the registered database")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	if *typ == "" || *schema == "" {
		return usagef("%s: --type and --schema are required", cmd)
	}
	st, org, project, proj, err := ref.open(ctx, cmd, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.TouchDatabase(ctx, proj.ID, *typ, *schema); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "running servers read the tables of %s/%s in %s/%s again now\n", *typ, *schema, org, project)
	return nil
}

// envRefreshInterval sets the default of --refresh-interval.
const envRefreshInterval = "MINIMAL_REFRESH_INTERVAL"

// refreshIntervalFlag defines --refresh-interval: how long a server
// trusts the tables and columns it read from a database before reading
// them again (engine.Config.RefreshInterval; default: env
// MINIMAL_REFRESH_INTERVAL, else 30s). An environment value that is not a
// duration makes the default 0, which the caller refuses unless the flag
// is given.
func refreshIntervalFlag(fs *flag.FlagSet) *time.Duration {
	d := 30 * time.Second
	if v := os.Getenv(envRefreshInterval); v != "" {
		d, _ = time.ParseDuration(v)
	}
	return fs.Duration("refresh-interval", d, "how long the tables and columns read from a database are trusted before they are read again (env "+envRefreshInterval+"); `minimal db reload` reads them at once")
}
