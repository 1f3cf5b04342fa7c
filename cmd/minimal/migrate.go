package main

import (
	"context"
	"fmt"
	"io"
)

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", stderr)
	dataDir := dataDirFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("migrate: unexpected argument %q", fs.Arg(0))
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "control-plane store at schema version %d\n", v)
	return nil
}
