package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/littlebitlabs/minimal/policy"
	"github.com/littlebitlabs/minimal/store"
)

// cmdApply makes a project match a policy file, printing one line per
// change ("= nothing to change" when it already does).
func cmdApply(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("apply", stderr)
	dataDir := dataDirFlag(fs)
	file := fs.String("f", "", "policy file to apply ('-' reads standard input)")
	dryRun := fs.Bool("dry-run", false, "print the changes without making them")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usagef("apply: -f FILE is required")
	}
	if fs.NArg() > 0 {
		return usagef("apply: unexpected argument %q", fs.Arg(0))
	}
	var f *policy.File
	var err error
	if *file == "-" {
		f, err = policy.Load(os.Stdin)
	} else {
		f, err = policy.LoadFile(*file)
	}
	if err != nil {
		return err
	}
	// What the file alone shows wrong is reported before any store is
	// opened (or created).
	if err := f.Validate(); err != nil {
		return err
	}

	dir := *dataDir
	if *dryRun && !store.Exists(dir) {
		// Planning against a store that does not exist yet must not create
		// one: plan against an empty throwaway store instead.
		tmp, err := os.MkdirTemp("", "minimal-dry-run")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	var st *store.Store
	if *dryRun {
		st, err = store.Open(ctx, dir)
	} else {
		st, err = openStore(ctx, dir)
	}
	if err != nil {
		return err
	}
	defer st.Close()

	var changes policy.Changes
	if *dryRun {
		changes, err = policy.Plan(ctx, st, f)
	} else {
		changes, err = policy.Apply(ctx, st, f)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, changes.String())
	if *dryRun && !changes.Empty() {
		fmt.Fprintln(stdout, "(dry run: nothing was changed)")
	}
	return nil
}
