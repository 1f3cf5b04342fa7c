package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
)

// policyExplain prints how a request by an identity would fare: each gate's
// decision, the granted columns and the SQL that would run. Nothing is
// executed on the database.
func policyExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policy explain", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	identity := fs.String("identity", "", "identity name (required)")
	method := fs.String("method", "GET", "GET, POST, PUT or DELETE")
	path := fs.String("path", "", "request path with its query string, starting with /minimal/api/rest/auto/v1/ (required; quote it: '?' and '&' are the shell's)")
	body := fs.String("body", "", "JSON body of a POST or PUT")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("policy explain: unexpected argument %q (quote --path: '&' ends a shell command)", fs.Arg(0))
	}
	if *identity == "" || *path == "" {
		return usagef("policy explain: --identity and --path are required")
	}
	m := strings.ToUpper(*method)
	if !slices.Contains([]string{"GET", "POST", "PUT", "DELETE"}, m) {
		return usagef("policy explain: --method must be GET, POST, PUT or DELETE, not %q", *method)
	}
	u, err := url.ParseRequestURI(*path)
	if err != nil || !strings.HasPrefix(*path, "/") || strings.HasPrefix(*path, "//") || u.Host != "" {
		return usagef("policy explain: --path must be a request path such as '/minimal/api/rest/auto/v1/demo/demo/pg/public/employees?ps=10&pg=0', not %q", *path)
	}
	o, p, err := ref.names("policy explain")
	if err != nil {
		return err
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	_, proj, err := resolveProject(ctx, st, o, p)
	if err != nil {
		return err
	}
	id, err := st.Identity(ctx, proj.ID, *identity)
	if err != nil {
		return err
	}
	principal, err := auth.PrincipalFor(ctx, st, id)
	if err != nil {
		return err
	}
	eng, err := engine.New(ctx, st, engine.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer eng.Close()
	plan, x, err := api.ExplainRequest(ctx, eng, principal, m, u, *body, api.Config{})
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "identity %s  roles %v  key_type %s\n", principal.Identity, principal.Roles, principal.KeyType)
	fmt.Fprintf(stdout, "request  %s %s  (%s on %s)\n\n", m, *path, plan.Action, x.Object)
	for _, g := range x.Gates {
		fmt.Fprintf(stdout, "  %-12s %-9s %s\n", g.Name, g.Decision, g.Detail)
	}
	if x.Columns != nil {
		fmt.Fprintf(stdout, "\ncolumns  %s\n", strings.Join(x.Columns, ", "))
	}
	if x.Stmt != nil {
		fmt.Fprintf(stdout, "sql      %s\nargs     %v\n", x.Stmt.SQL, x.Stmt.Args)
	}
	if x.Outcome != nil {
		fe := fault.As(x.Outcome)
		fmt.Fprintf(stdout, "\noutcome  %s %s\n", fe.WireCode(), fe.Message)
	} else {
		fmt.Fprintln(stdout, "\noutcome  allowed (not executed)")
	}
	return nil
}
