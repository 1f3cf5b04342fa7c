package mi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

// The file capabilities of the mi source (dialects.Snapshots,
// dialects.SchemaChanges): the engine calls them for the mini-app tools
// data_snapshot, schema_create, schema_update, schema_delete and
// schema_batch, after its gates.

// BackupDir is the directory of a scope's backups, under the scope root.
const BackupDir = "_backup"

// CountRows counts every row of a table; a table without a file has none
// (the file is not created).
func (s *Source) CountRows(ctx context.Context, table string) (int64, error) {
	if !safeName(table) {
		return 0, notFound(table)
	}
	if _, err := os.Stat(dbFile(s.dir, table)); err != nil {
		return 0, nil
	}
	t, err := s.tableDB(ctx, table)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM rows").Scan(&n); err != nil {
		return 0, storageFail(err)
	}
	return n, nil
}

// Snapshot copies a table's file consistently, while it stays open and
// writable, to dst (VACUUM INTO, which creates dst).
func (s *Source) Snapshot(ctx context.Context, table, dst string) error {
	if !safeName(table) {
		return notFound(table)
	}
	t, err := s.tableDB(ctx, table)
	if err != nil {
		return err
	}
	if _, err := t.db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return storageFail(err)
	}
	return nil
}

// CreateTable creates a table of the source's directory (see the package
// function CreateTable).
func (s *Source) CreateTable(_ context.Context, table string, def []byte) error {
	return CreateTable(s.dir, table, def)
}

// ReplaceSchema backs the table up and replaces its schema.yaml with def.
func (s *Source) ReplaceSchema(ctx context.Context, table string, def []byte, o dialects.FileOptions) (string, error) {
	if _, err := parseSchema(def); err != nil {
		return "", fault.Wrap(fault.Invalid, err, "schema parse error")
	}
	dir, err := s.backup(ctx, table, o)
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(schemaFile(s.dir, table), def, o.Perm); err != nil {
		return "", ioFail(err)
	}
	return dir, nil
}

// DropSchema backs the table up and removes its schema.yaml; its .db file
// stays.
func (s *Source) DropSchema(ctx context.Context, table string, o dialects.FileOptions) (string, error) {
	dir, err := s.backup(ctx, table, o)
	if err != nil {
		return "", err
	}
	if err := os.Remove(schemaFile(s.dir, table)); err != nil {
		return "", ioFail(err)
	}
	return dir, nil
}

// backup writes the pair <dir>/_backup/<table>.<unix_secs>.yaml + .db (the
// db through VACUUM INTO, consistent while the file stays in use) and
// removes the pairs beyond o.Keep. Two backups within one second take the
// next free second. It returns the backup directory.
func (s *Source) backup(ctx context.Context, table string, o dialects.FileOptions) (string, error) {
	if !safeName(table) {
		return "", notFound(table)
	}
	db := dbFile(s.dir, table)
	if _, err := os.Stat(db); err != nil {
		return "", backupFail(fmt.Sprintf("database file of table '%s' not found: %s", table, db), err)
	}
	y, err := os.ReadFile(schemaFile(s.dir, table))
	if err != nil {
		return "", backupFail(fmt.Sprintf("cannot read schema.yaml of table '%s': %s", table, osMsg(err)), err)
	}
	dir := filepath.Join(s.dir, BackupDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", backupFail("cannot create backup dir: "+osMsg(err), err)
	}
	secs := s.now().Unix()
	base := func(n int64) string { return filepath.Join(dir, fmt.Sprintf("%s.%d", table, n)) }
	for fileExists(base(secs)+".yaml") || fileExists(base(secs)+".db") {
		secs++
	}
	if err := s.vacuumInto(ctx, table, base(secs)+".db"); err != nil {
		return "", backupFail("sqlite backup failed: "+err.Error(), err)
	}
	if err := writeFileAtomic(base(secs)+".yaml", y, o.Perm); err != nil {
		os.Remove(base(secs) + ".db")
		return "", backupFail("cannot write yaml backup: "+osMsg(err), err)
	}
	purgeBackups(dir, table, max(o.Keep, 1))
	return dir, nil
}

// vacuumInto copies a table's file consistently into dst, through a
// temporary name and a rename.
func (s *Source) vacuumInto(ctx context.Context, table, dst string) error {
	t, err := s.tableDB(ctx, table)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO creates the file itself
	defer os.Remove(name)
	if _, err := t.db.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return err
	}
	return os.Rename(name, dst)
}

// backupGenerations lists the unix_secs of a table's backups (yaml or db),
// newest first.
func backupGenerations(dir, table string) []int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	seen := map[int64]bool{}
	var out []int64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), table+".")
		if !ok || e.IsDir() {
			continue
		}
		ts, ok := strings.CutSuffix(rest, ".yaml")
		if !ok {
			if ts, ok = strings.CutSuffix(rest, ".db"); !ok {
				continue
			}
		}
		n, err := strconv.ParseUint(ts, 10, 63)
		if err != nil || seen[int64(n)] {
			continue
		}
		seen[int64(n)] = true
		out = append(out, int64(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// purgeBackups removes a table's backup pairs beyond the newest keep.
func purgeBackups(dir, table string, keep int) {
	for i, n := range backupGenerations(dir, table) {
		if i < keep {
			continue
		}
		for _, ext := range []string{".yaml", ".db"} {
			_ = os.Remove(filepath.Join(dir, fmt.Sprintf("%s.%d%s", table, n, ext)))
		}
	}
}

// Batch runs a schema_batch on one table: backups first (one pair per
// update or delete op of a table that exists), then the file of a table
// the batch creates, the query and replace ops in one transaction and one
// SAVEPOINT, and after the commit the schema.yaml the batch leaves
// (written beside it before the transaction, renamed into place after).
// Any failure undoes what was made and leaves the table as it was.
func (s *Source) Batch(ctx context.Context, table string, ops []dialects.BatchOp, o dialects.FileOptions) (res dialects.BatchResult, err error) {
	if !tableNameRE.MatchString(table) {
		return res, fault.New(fault.Invalid, "table name %q must match [A-Za-z0-9_-]+", table)
	}
	yamlPath, dbPath := schemaFile(s.dir, table), dbFile(s.dir, table)
	existed := fileExists(yamlPath)
	exists, creates, hasSQL := existed, false, false
	var final []byte
	for _, op := range ops {
		switch op.Kind {
		case dialects.BatchQuery, dialects.BatchReplace:
			hasSQL = true
		case dialects.BatchCreate:
			if _, err := parseSchema(op.Def); err != nil {
				return res, fault.Wrap(fault.Invalid, err, "schema parse error")
			}
			exists, creates, final = true, true, op.Def
		case dialects.BatchUpdate:
			if _, err := parseSchema(op.Def); err != nil {
				return res, fault.Wrap(fault.Invalid, err, "schema parse error")
			}
			final = op.Def
		case dialects.BatchDelete:
			exists, final = false, nil
		}
	}
	res.Backups = []string{}
	for _, op := range ops {
		if existed && (op.Kind == dialects.BatchUpdate || op.Kind == dialects.BatchDelete) {
			dir, err := s.backup(ctx, table, o)
			if err != nil {
				return res, err
			}
			res.Backups = append(res.Backups, dir)
		}
	}
	// A table created by the batch gets its file before any SQL runs.
	madeDB, madeDir, undo := false, false, true
	var tmpYAML string
	defer func() {
		if err == nil || !undo {
			return
		}
		if tmpYAML != "" {
			os.Remove(tmpYAML)
		}
		if madeDB {
			s.forgetDB(table)
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				os.Remove(dbPath + suffix)
			}
		}
		if madeDir {
			os.Remove(filepath.Dir(dbPath)) // only if empty
		}
	}()
	if creates && !fileExists(dbPath) {
		madeDir = !fileExists(filepath.Dir(dbPath))
		if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
			return res, ioFail(err)
		}
		madeDB = true
		if _, err := s.tableDB(ctx, table); err != nil {
			return res, storageFail(err)
		}
	}
	if exists && final != nil {
		f, err := os.CreateTemp(filepath.Dir(yamlPath), ".schema.yaml.tmp-*")
		if err == nil {
			_, err = f.Write(final)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(f.Name())
			}
		}
		if err != nil {
			return res, ioFail(err)
		}
		tmpYAML = f.Name()
		defer os.Remove(tmpYAML)
	}
	if hasSQL {
		if res.Deleted, res.Inserted, res.Changed, err = s.batchSQL(ctx, table, ops); err != nil {
			return res, err
		}
	}
	// Committed: from here on nothing is undone.
	undo = false
	switch {
	case tmpYAML != "":
		if err := os.Chmod(tmpYAML, o.Perm); err != nil {
			return res, ioFail(err)
		}
		if err := os.Rename(tmpYAML, yamlPath); err != nil {
			return res, ioFail(err)
		}
	case existed && !exists:
		if err := os.Remove(yamlPath); err != nil {
			return res, ioFail(err)
		}
	}
	return res, nil
}

// batchSQL runs the query and replace ops in one transaction and one
// SAVEPOINT on the table's file, in this process's write turn of the
// table; any failure rolls everything back and names the op. It counts
// the rows replace deleted and inserted, and those the query ops changed.
func (s *Source) batchSQL(ctx context.Context, table string, ops []dialects.BatchOp) (deleted, inserted, changed int64, err error) {
	t, err := s.tableDB(ctx, table)
	if err != nil {
		return 0, 0, 0, storageFail(err)
	}
	if err := t.lockWrite(ctx); err != nil {
		return 0, 0, 0, storageFail(err)
	}
	defer t.unlockWrite()
	conn, err := t.db.Conn(ctx)
	if err != nil {
		return 0, 0, 0, storageFail(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return 0, 0, 0, storageFail(err)
	}
	done := false
	defer func() {
		if !done {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if _, err := conn.ExecContext(ctx, "SAVEPOINT schema_batch"); err != nil {
		return 0, 0, 0, storageFail(err)
	}
	now := s.now().Unix()
	for i, op := range ops {
		switch op.Kind {
		case dialects.BatchQuery:
			res, err := conn.ExecContext(ctx, op.SQL, op.Args...)
			if err != nil {
				return 0, 0, 0, opFail(i, err)
			}
			if n, err := res.RowsAffected(); err == nil {
				changed += n
			}
		case dialects.BatchReplace:
			where := make([]string, len(op.Match))
			var args []any
			for k, m := range op.Match {
				where[k] = "json_extract(data, ?) = ?"
				args = append(args, `$."`+m[0]+`"`, m[1])
			}
			res, err := conn.ExecContext(ctx, "DELETE FROM rows WHERE "+strings.Join(where, " AND "), args...)
			if err != nil {
				return 0, 0, 0, opFail(i, err)
			}
			n, _ := res.RowsAffected()
			deleted += n
			for _, data := range op.Items {
				if _, err := conn.ExecContext(ctx, insertRow, uuid.NewString(), data, now, now); err != nil {
					return 0, 0, 0, opFail(i, err)
				}
				inserted++
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "RELEASE schema_batch"); err != nil {
		return 0, 0, 0, storageFail(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, 0, 0, storageFail(err)
	}
	done = true
	return deleted, inserted, changed, nil
}

// writeFileAtomic writes b to path, with mode perm, through a temporary
// file in the same directory and a rename.
func writeFileAtomic(path string, b []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, perm); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// osMsg is an OS error without Go's "op path:" wrapper.
func osMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func backupFail(msg string, err error) error {
	return &dialects.FileError{Step: dialects.StepBackup, Kind: fault.Unavailable, Msg: msg, Err: err}
}

func ioFail(err error) error {
	return &dialects.FileError{Step: dialects.StepIO, Kind: fault.Internal, Msg: osMsg(err), Err: err}
}

func storageFail(err error) error {
	return &dialects.FileError{Step: dialects.StepStorage, Kind: fault.Internal, Msg: err.Error(), Err: err}
}

func opFail(i int, err error) error {
	return &dialects.FileError{Step: dialects.StepOp, Index: i, Kind: fault.Invalid, Msg: err.Error(), Err: err}
}

var (
	_ dialects.Snapshots       = (*Source)(nil)
	_ dialects.SchemaChanges   = (*Source)(nil)
	_ dialects.History         = (*Source)(nil)
	_ dialects.AliasStore      = (*Source)(nil)
	_ dialects.Definitions     = (*Source)(nil)
	_ dialects.TableAggregates = (*Source)(nil)
)
