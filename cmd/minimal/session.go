package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/littlebitlabs/minimal/sessions"
)

// cmdSession reads AI sessions: `session journal ID` prints a session and
// every call journaled in it (--json: the admin API's document).
func cmdSession(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("session journal", stderr)
	dataDir := dataDirFlag(fs)
	asJSON := fs.Bool("json", false, "print the journal as JSON")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("session journal: give one session id (see 'minimal session journal --help')")
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := sessions.Journal(ctx, st, "", fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	s := v.Session
	fmt.Fprintf(stdout, "session %s  %s  identity %s\n", s.ID, s.State, s.Identity)
	fmt.Fprintf(stdout, "name     %s\ncontext  %s\nstarted  %s\n", s.Name, s.Context, s.StartedAt.Format(time.RFC3339))
	if s.EndedAt != nil {
		fmt.Fprintf(stdout, "ended    %s\n", s.EndedAt.Format(time.RFC3339))
	} else if s.ExpiresAt != nil {
		fmt.Fprintf(stdout, "expires  %s\n", s.ExpiresAt.Format(time.RFC3339))
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tSTARTED\tTOOL\tOUTCOME\tROWS\tMS\tARGUMENTS\tMESSAGE")
	for _, c := range v.Calls {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.1f\t%s\t%s\n", c.Seq, c.StartedAt.Format("15:04:05.000"), c.Tool, c.Outcome, c.Rows, c.DurationMS, c.Arguments, c.Message)
	}
	return tw.Flush()
}
