package main

import (
	"context"
	"fmt"
	"io"

	"github.com/littlebitlabs/minimal/policy"
)

// cmdPolicy dispatches the policy subcommands.
func cmdPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args[0] == "show" {
		return policyShow(ctx, args[1:], stdout, stderr)
	}
	return policyExplain(ctx, args[1:], stdout, stderr)
}

// policyShow prints the effective policy of a project: as YAML, a file
// that 'minimal apply' takes back as nothing to change, or as text.
func policyShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policy show", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	format := fs.String("format", "yaml", "yaml (apply-able) or text")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("policy show: unexpected argument %q", fs.Arg(0))
	}
	if *format != "yaml" && *format != "text" {
		return usagef("policy show: --format must be yaml or text, not %q", *format)
	}
	o, p, err := ref.names("policy show")
	if err != nil {
		return err
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := policy.Export(ctx, st, o, p)
	if err != nil {
		return err
	}
	if *format == "text" {
		_, err = fmt.Fprint(stdout, f.Text())
		return err
	}
	out, err := f.Marshal()
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
