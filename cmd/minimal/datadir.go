package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// openStore opens the control-plane store of an existing data dir. Only
// serve and init create one: every other command given a data dir without
// a store is refused, naming the directory it looked in and how to point
// at another (with MINIMAL_CONTROL_DSN set the store is that PostgreSQL
// database and the data dir only holds the master key).
func openStore(ctx context.Context, dataDir string) (*store.Store, error) {
	if err := checkDataDir(dataDir); err != nil {
		return nil, err
	}
	if os.Getenv(store.EnvControlDSN) != "" {
		return store.Open(ctx, dataDir)
	}
	_, err := os.Stat(filepath.Join(dataDir, store.DBFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		where := dataDir
		if abs, err := filepath.Abs(dataDir); err == nil {
			where = abs
		}
		return nil, fault.New(fault.NotFound, "no data dir at %s (no %s there): pass --data-dir DIR or set MINIMAL_DATA_DIR to an existing data dir, or create one with 'minimal init --data-dir DIR' or 'minimal serve'", where, store.DBFile)
	case err != nil:
		return nil, fault.Wrap(fault.Internal, err, "cannot read the data dir %s", dataDir)
	}
	return store.Open(ctx, dataDir)
}

// checkDataDir refuses an empty --data-dir as a usage error.
func checkDataDir(dataDir string) error {
	if strings.TrimSpace(dataDir) == "" {
		return usagef("--data-dir is empty: name a directory (or set MINIMAL_DATA_DIR)")
	}
	return nil
}

// cmdInit creates an empty data dir: the control-plane store, its master
// key and the token signing key. An existing one is left as it is.
func cmdInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("init", stderr)
	dataDir := dataDirFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("init: unexpected argument %q", fs.Arg(0))
	}
	if err := checkDataDir(*dataDir); err != nil {
		return err
	}
	existed := store.Exists(*dataDir)
	privateFiles() // the data dir's files are private, as serve makes them
	st, err := store.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := auth.SigningKey(ctx, st); err != nil {
		return err
	}
	if existed {
		fmt.Fprintf(stdout, "data dir %s already holds a store: nothing to do\n", *dataDir)
		return nil
	}
	fmt.Fprintf(stdout, "created data dir %s ('minimal apply -f FILE' adds orgs; 'minimal serve' adds org demo on start)\n", *dataDir)
	return nil
}

// projectRef is the --org and --project flags of a command: the
// abbreviations of an org and a project (as in URLs), or --project
// ORG/PROJECT.
type projectRef struct{ org, project *string }

func projectFlags(fs *flag.FlagSet) projectRef {
	return projectRef{
		org:     fs.String("org", "demo", "org abbreviation (as in URLs)"),
		project: fs.String("project", "demo", "project abbreviation, or ORG/PROJECT"),
	}
}

// names returns the org and project abbreviations the flags name; cmd
// prefixes the usage error of a malformed one.
func (r projectRef) names(cmd string) (string, string, error) {
	o, p := *r.org, *r.project
	flag := "--org"
	if before, after, ok := strings.Cut(p, "/"); ok {
		o, p, flag = before, after, "--project"
		if strings.Contains(p, "/") {
			return "", "", usagef("%s: --project must be ORG/PROJECT or PROJECT, not %q", cmd, *r.project)
		}
	}
	if err := store.CheckAbbr("org abbreviation", o); err != nil {
		return "", "", usagef("%s: %s: %s", cmd, flag, fault.As(err).Message)
	}
	if err := store.CheckAbbr("project abbreviation", p); err != nil {
		return "", "", usagef("%s: --project: %s", cmd, fault.As(err).Message)
	}
	return o, p, nil
}

// resolve finds the project the flags name in st.
func (r projectRef) resolve(ctx context.Context, st *store.Store, cmd string) (store.Project, error) {
	o, p, err := r.names(cmd)
	if err != nil {
		return store.Project{}, err
	}
	_, proj, err := resolveProject(ctx, st, o, p)
	return proj, err
}

// open names the flags' org and project (cmd prefixes a usage error),
// opens the store of dataDir and finds the project there. The caller
// closes the store.
func (r projectRef) open(ctx context.Context, cmd, dataDir string) (st *store.Store, org, project string, proj store.Project, err error) {
	org, project, err = r.names(cmd)
	if err != nil {
		return nil, "", "", store.Project{}, err
	}
	st, err = openStore(ctx, dataDir)
	if err != nil {
		return nil, "", "", store.Project{}, err
	}
	if _, proj, err = resolveProject(ctx, st, org, project); err != nil {
		st.Close()
		return nil, "", "", store.Project{}, err
	}
	return st, org, project, proj, nil
}
