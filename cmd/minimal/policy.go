package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/littlebitlabs/minimal/policy"
)

// cmdPolicy dispatches the policy subcommands.
func cmdPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("policy: say show or explain")
	}
	switch args[0] {
	case "show":
		return policyShow(ctx, args[1:], stdout, stderr)
	case "explain":
		return policyExplain(ctx, args[1:], stdout, stderr)
	}
	return usagef("policy: unknown subcommand %q (show, explain)", args[0])
}

// policyShow prints the effective policy of a project: as YAML, a file
// that 'minimal apply' takes back as nothing to change, or as text.
func policyShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policy show", stderr)
	dataDir := dataDirFlag(fs)
	org := fs.String("org", "demo", "org name or abbreviation (when --project has no ORG/)")
	project := fs.String("project", "demo", "ORG/PROJECT, or a project of --org (names or abbreviations)")
	format := fs.String("format", "yaml", "yaml (apply-able) or text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("policy show: unexpected argument %q", fs.Arg(0))
	}
	if *format != "yaml" && *format != "text" {
		return usagef("policy show: --format must be yaml or text, not %q", *format)
	}
	o, p := *org, *project
	if before, after, ok := strings.Cut(p, "/"); ok {
		o, p = before, after
	}
	if o == "" || p == "" || strings.Contains(p, "/") {
		return usagef("policy show: --project must be ORG/PROJECT or PROJECT, not %q", *project)
	}
	st, err := openExisting(ctx, *dataDir)
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
