package miniapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// EnvSnapshotRetention names the number of snapshot generations kept per
// table (default DefaultSnapshotRetention).
const EnvSnapshotRetention = "MINI_APP_SNAPSHOT_RETENTION"

// DefaultSnapshotRetention is the retention without (or with an invalid)
// MINI_APP_SNAPSHOT_RETENTION.
const DefaultSnapshotRetention = 10

func init() {
	insertTools("row_materialize",
		&Tool{Name: "data_snapshot", Action: query.Read,
			Description: "Online SQLite snapshot of one or all tables to <scope_root>/_snapshots/<table>.<unix_secs>.db (on the gateway: <export root>/<org>/<project>/_snapshots/<schema>/), keeping the newest MINI_APP_SNAPSHOT_RETENTION (default 10). table and scope (project|user) narrow the set; dry_run previews; upload pushes each snapshot to the MINI_APP_S3_* destination. Needs role admin.",
			InputSchema: obj(`"scope":{"type":"string","description":"project or user."},"dry_run":{"type":"boolean"},"upload":{"type":"boolean"},` + tableProp),
			run:         (*Service).snapshot})
}

// SnapshotRetention reads MINI_APP_SNAPSHOT_RETENTION through getenv: a
// positive integer, else DefaultSnapshotRetention.
func SnapshotRetention(getenv func(string) string) int {
	n, err := strconv.Atoi(strings.TrimSpace(getenv(EnvSnapshotRetention)))
	if err != nil || n < 1 {
		return DefaultSnapshotRetention
	}
	return n
}

func snapshotErr(msg string) *Error {
	return newErr(fault.Unavailable, "SNAPSHOT_ERROR", nil, "snapshot error: %s", msg)
}

// snapTarget is a table to snapshot: its scope, and the directory its
// snapshots go to.
type snapTarget struct {
	t           *target
	scope, root string
	snaps       string
}

// snapDir is where a table's snapshots go: <scope_root>/_snapshots in the
// drop-in mode; on the gateway, _snapshots/<schema> under the caller's
// first export directory (see outDir), made when create.
func (s *Service) snapDir(p *auth.Principal, st snapTarget, create bool) (string, error) {
	dir := filepath.Join(st.root, "_snapshots")
	if !s.cfg.Mounted {
		dir = filepath.Join("_snapshots", st.t.schema)
	}
	out, err := s.outDir(p, dir, create)
	if err != nil {
		if e, ok := err.(*Error); ok {
			return "", e
		}
		return "", snapshotErr("cannot create snapshot dir: " + errMsg(err))
	}
	return out, nil
}

// scopeOf places a table: the drop-in mode's user database is scope user,
// its legacy pair sits in the directory of MINI_APP_SCHEMA (scope unknown);
// every other mi database is scope project, rooted at its own directory.
func (s *Service) scopeOf(t *target) snapTarget {
	st := snapTarget{t: t, scope: SchemaProject, root: filepath.Dir(filepath.Dir(mi.SchemaPath(t.dir, t.table)))}
	if !s.cfg.Mounted {
		return st
	}
	switch t.schema {
	case SchemaUser:
		st.scope = SchemaUser
	case SchemaLegacy:
		st.scope = "unknown"
		if p, err := filepath.EvalSymlinks(mi.SchemaPath(t.dir, t.table)); err == nil {
			st.root = filepath.Dir(p)
		}
	}
	return st
}

func (s *Service) snapshot(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Scope  *string `json:"scope"`
		DryRun bool    `json:"dry_run"`
		Upload bool    `json:"upload"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	env := s.envOf()
	// The upload configuration is checked before anything is written.
	var up *S3Config
	if a.Upload {
		var err error
		if up, err = S3ConfigFrom(env); err != nil {
			return "", err
		}
	}
	if err := requireAdmin(p, "data_snapshot"); err != nil {
		return "", err
	}
	var ts []*target
	// Drop-in: a table given as "" is one table, named "" (not found).
	if a.Table != "" || (s.cfg.Mounted && tableNamedEmpty(args)) {
		t, err := s.resolveArg(ctx, p, args, a.tableArgs)
		if err != nil {
			return "", err
		}
		ts = []*target{t}
	} else {
		all, err := s.tables(ctx, p)
		if err != nil {
			return "", err
		}
		for _, t := range all {
			if a.Schema == "" || t.schema == a.Schema {
				ts = append(ts, t)
			}
		}
	}
	if a.Scope != nil && *a.Scope != SchemaProject && *a.Scope != SchemaUser {
		return "", snapshotErr(fmt.Sprintf("unrecognised scope '%s': expected 'project' or 'user'", *a.Scope))
	}
	var targets []snapTarget
	for _, t := range ts {
		st := s.scopeOf(t)
		if a.Scope != nil && st.scope != *a.Scope {
			continue
		}
		// The engine's gates decide whether the caller may copy the
		// table: read on every row and column.
		if _, err := s.eng.CountRows(ctx, p, t.ref(), engine.OpSnapshot); err != nil {
			return "", snapshotFail(err, "")
		}
		// Refused here, before any snapshot is written, when the
		// directory is not the caller's.
		var err error
		if st.snaps, err = s.snapDir(p, st, false); err != nil {
			return "", err
		}
		targets = append(targets, st)
	}
	sort.SliceStable(targets, func(i, j int) bool { return targets[i].t.table < targets[j].t.table })
	retention := SnapshotRetention(env)

	if a.DryRun {
		names := []string{}
		counts, purge := map[string]int64{}, map[string]int{}
		for _, st := range targets {
			n, err := s.eng.CountRows(ctx, p, st.t.ref(), engine.OpSnapshot)
			if err != nil {
				return "", snapshotFail(err, fmt.Sprintf("row_count failed for table '%s': ", st.t.table))
			}
			names = append(names, st.t.table)
			counts[st.t.table] = n
			purge[st.t.table] = max(len(generations(st.snaps, st.t.table))-retention, 0)
		}
		sort.Strings(names)
		return compact(map[string]any{"dry_run": true, "affects": map[string]any{
			"target_tables": names, "row_counts": counts, "would_purge_generations": purge}})
	}

	type snapped struct {
		Scope        string `json:"scope"`
		SnapshotPath string `json:"snapshot_path"`
		Table        string `json:"table"`
		UnixSecs     *int64 `json:"unix_secs"`
	}
	type purged struct {
		Removed int    `json:"generations_removed"`
		Table   string `json:"table"`
	}
	type uploaded struct {
		Bytes int64  `json:"bytes"`
		Key   string `json:"key"`
		Table string `json:"table"`
	}
	type uploadErr struct {
		Error string `json:"error"`
		Table string `json:"table"`
	}
	out := struct {
		Purged       []purged     `json:"purged"`
		Snapshotted  []snapped    `json:"snapshotted"`
		UploadErrors *[]uploadErr `json:"upload_errors,omitempty"`
		Uploaded     *[]uploaded  `json:"uploaded,omitempty"`
	}{Snapshotted: []snapped{}, Purged: []purged{}}
	var ups []uploaded
	var upErrs []uploadErr
	for _, st := range targets {
		dir, err := s.snapDir(p, st, true)
		if err != nil {
			return "", err
		}
		path, secs, err := s.writeSnapshot(ctx, p, dir, st.t)
		if err != nil {
			return "", err
		}
		out.Snapshotted = append(out.Snapshotted, snapped{st.scope, path, st.t.table, &secs})
		if n := purgeSnapshots(dir, st.t.table, retention); n > 0 {
			out.Purged = append(out.Purged, purged{n, st.t.table})
		}
		if up != nil {
			key := up.keyFor(filepath.Base(path))
			if n, err := up.upload(ctx, path, key); err != nil {
				upErrs = append(upErrs, uploadErr{err.Error(), st.t.table})
			} else {
				ups = append(ups, uploaded{n, key, st.t.table})
			}
		}
	}
	if up != nil {
		if ups == nil {
			ups = []uploaded{}
		}
		if upErrs == nil {
			upErrs = []uploadErr{}
		}
		out.Uploaded, out.UploadErrors = &ups, &upErrs
	}
	return compact(out)
}

// snapshotFail words a failure of the engine's snapshot calls: the
// table file's own failure as SNAPSHOT_ERROR (its message after prefix),
// anything else (a refusal) as it is.
func snapshotFail(err error, prefix string) error {
	var fe *dialects.FileError
	if errors.As(err, &fe) {
		return snapshotErr(prefix + fe.Err.Error())
	}
	return err
}

// writeSnapshot has the engine copy the table file consistently while it
// stays open and writable (the mi source's VACUUM INTO) into
// <dir>/<table>.<unix_secs>.db (dir as snapDir made it), through a
// temporary file and a rename.
func (s *Service) writeSnapshot(ctx context.Context, p *auth.Principal, dir string, t *target) (string, int64, error) {
	tmp, err := os.CreateTemp(dir, "."+t.table+".tmp-*")
	if err != nil {
		return "", 0, snapshotErr("cannot create snapshot file: " + errMsg(err))
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO creates the file itself
	defer os.Remove(name)
	if err := s.eng.Snapshot(ctx, p, t.ref(), name); err != nil {
		return "", 0, snapshotFail(err, "sqlite backup failed: ")
	}
	secs := time.Now().Unix()
	path, err := s.outFile(p, dir, fmt.Sprintf("%s.%d.db", t.table, secs))
	if err != nil {
		return "", 0, err
	}
	if err := os.Chmod(name, s.filePerm()); err != nil {
		return "", 0, snapshotErr("cannot write snapshot: " + errMsg(err))
	}
	if err := os.Rename(name, path); err != nil {
		return "", 0, snapshotErr("cannot write snapshot: " + errMsg(err))
	}
	return path, secs, nil
}

// generations lists the unix_secs of a table's snapshots in dir, newest
// first.
func generations(dir, table string) []int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), table+".")
		if !ok || e.IsDir() {
			continue
		}
		ts, ok := strings.CutSuffix(rest, ".db")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(ts, 10, 63); err == nil {
			out = append(out, int64(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// purgeSnapshots removes a table's snapshots in dir beyond the newest
// keep and returns how many went.
func purgeSnapshots(dir, table string, keep int) int {
	n := 0
	gens := generations(dir, table)
	for i, ts := range gens {
		if i < keep {
			continue
		}
		if os.Remove(filepath.Join(dir, fmt.Sprintf("%s.%d.db", table, ts))) == nil {
			n++
		}
	}
	return n
}
