package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// cmdAudit prints a project's audit log, newest first: every data operation
// through either face with who did it, what, how many rows and the outcome.
// It reads the store directly, so it works with the server running or not.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("audit", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	limit := fs.Int("limit", 50, fmt.Sprintf("entries to print (at most %d)", store.MaxAuditLimit))
	identity := fs.String("identity", "", "only this identity")
	object := fs.String("object", "", "only this table, as type/schema/table")
	action := fs.String("action", "", "only this action: create, read, update, delete (or write: a custom API)")
	outcome := fs.String("outcome", "", "ok, error (any refusal or failure) or an error code")
	since := fs.String("since", "", "only entries this recent: a duration (1h) or an RFC 3339 time")
	before := fs.String("before", "", "only entries older than this entry id (paging)")
	asJSON := fs.Bool("json", false, "print JSON lines, one entry each")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("audit: unexpected argument %q", fs.Arg(0))
	}
	o, p, err := ref.names("audit")
	if err != nil {
		return err
	}
	if *limit <= 0 || *limit > store.MaxAuditLimit {
		return usagef("audit: --limit must be between 1 and %d", store.MaxAuditLimit)
	}
	f := store.AuditFilter{Identity: *identity, Object: *object, Action: *action, Outcome: *outcome, Before: *before, Limit: *limit}
	if *since != "" {
		if d, err := time.ParseDuration(*since); err == nil {
			f.Since = time.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, *since); err == nil {
			f.Since = t
		} else {
			return usagef("audit: --since %q is neither a duration nor an RFC 3339 time", *since)
		}
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
	entries, err := st.AuditLog(ctx, proj.ID, f)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, e := range entries {
			if err := enc.Encode(auditJSON(e)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tFACE\tIDENTITY\tROLES\tACTION\tOBJECT\tROWS\tOUTCOME\tMS\tREQUEST\tMESSAGE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%.1f\t%s\t%s\n",
			e.At.Format("2006-01-02T15:04:05.000Z"), orDash(e.Face), e.Identity, orDash(strings.Join(e.Roles, ",")),
			e.Action, e.Object, e.Rows, e.Outcome, float64(e.Duration.Microseconds())/1000, orDash(e.RequestID), e.Message)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// auditEntryJSON is an audit entry as `minimal audit --json` prints it.
type auditEntryJSON struct {
	ID         string    `json:"id"`
	At         time.Time `json:"at"`
	Face       string    `json:"face"`
	Identity   string    `json:"identity"`
	IdentityID string    `json:"identity_id"`
	Roles      []string  `json:"roles"`
	Action     string    `json:"action"`
	Object     string    `json:"object"`
	Rows       int64     `json:"rows"`
	Outcome    string    `json:"outcome"`
	Message    string    `json:"message,omitempty"`
	RequestID  string    `json:"request_id"`
	DurationMS float64   `json:"duration_ms"`
}

func auditJSON(e store.AuditEntry) auditEntryJSON {
	return auditEntryJSON{
		ID: e.ID, At: e.At, Face: e.Face, Identity: e.Identity, IdentityID: e.IdentityID, Roles: e.Roles,
		Action: e.Action, Object: e.Object, Rows: e.Rows, Outcome: e.Outcome, Message: e.Message,
		RequestID: e.RequestID, DurationMS: float64(e.Duration.Microseconds()) / 1000,
	}
}
