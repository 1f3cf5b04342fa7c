package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// The backends a migration may be written for alone (Migration.Only).
const (
	SQLite     = "sqlite"
	PostgreSQL = "postgres"
)

// Migration is one numbered SQL script.
type Migration struct {
	// Version is the number in the file name (1 for 0001_init.sql).
	Version int
	// Name is the rest of the file name without extension ("init").
	Name string
	// Only, when not empty, is the one backend the script is for, SQLite
	// or PostgreSQL: the file is named NNNN_name.sqlite.sql or
	// NNNN_name.postgres.sql. On the other backend the version is recorded
	// as applied without running anything, so that both count the same
	// versions.
	Only string
	// SQL is the script; it may hold several statements separated by ';'.
	SQL string
}

// For reports whether m runs on backend (SQLite or PostgreSQL).
func (m Migration) For(backend string) bool {
	return m.Only == "" || m.Only == backend
}

var all = mustLoad(files)

// All returns every embedded migration, sorted by ascending version. The
// slice is a fresh copy on each call.
func All() []Migration {
	out := make([]Migration, len(all))
	copy(out, all)
	return out
}

// mustLoad parses the embedded files. A malformed file name or a duplicate
// version is a build defect, so it panics at package initialisation.
func mustLoad(fsys fs.FS) []Migration {
	ms, err := load(fsys)
	if err != nil {
		panic(err)
	}
	return ms
}

func load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	seen := make(map[int]string, len(names))
	ms := make([]Migration, 0, len(names))
	for _, file := range names {
		version, name, only, err := parseName(file)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations: version %d used by both %s and %s", version, prev, file)
		}
		seen[version] = file
		body, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(string(body)) == "" {
			return nil, fmt.Errorf("migrations: %s is empty", file)
		}
		ms = append(ms, Migration{Version: version, Name: name, Only: only, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// parseName splits "0001_init.sql" into (1, "init", ""), and
// "0009_x.sqlite.sql" into (9, "x", SQLite).
func parseName(file string) (version int, name, only string, err error) {
	base, ok := strings.CutSuffix(file, ".sql")
	if !ok {
		return 0, "", "", fmt.Errorf("migrations: %s: not a .sql file", file)
	}
	for _, b := range []string{SQLite, PostgreSQL} {
		if rest, ok := strings.CutSuffix(base, "."+b); ok {
			base, only = rest, b
			break
		}
	}
	num, name, ok := strings.Cut(base, "_")
	if !ok || len(num) != 4 || name == "" || strings.Contains(name, ".") {
		return 0, "", "", fmt.Errorf("migrations: %s: want NNNN_name.sql, NNNN_name.sqlite.sql or NNNN_name.postgres.sql", file)
	}
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 {
		return 0, "", "", fmt.Errorf("migrations: %s: bad version %q", file, num)
	}
	return v, name, only, nil
}
