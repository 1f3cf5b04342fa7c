package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestAllSortedAndNumbered(t *testing.T) {
	ms := All()
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	if ms[0].Version != 1 || ms[0].Name != "init" {
		t.Fatalf("first migration = %d %q, want 1 init", ms[0].Version, ms[0].Name)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d, want contiguous versions", i, m.Version)
		}
		if strings.TrimSpace(m.SQL) == "" {
			t.Errorf("migration %d is empty", m.Version)
		}
	}
}

func TestAllReturnsCopy(t *testing.T) {
	a := All()
	a[0].SQL = "changed"
	if All()[0].SQL == "changed" {
		t.Fatal("All exposes its internal slice")
	}
}

func TestInitHasTables(t *testing.T) {
	sql := All()[0].SQL
	for _, table := range []string{"orgs", "projects", "spaces", "identities", "databases", "locks", "revoked_tokens", "settings", "changes"} {
		if !strings.Contains(sql, "CREATE TABLE "+table+" (") {
			t.Errorf("0001_init.sql does not create %s", table)
		}
	}
	for _, banned := range []string{"AUTOINCREMENT", "INSERT OR", "WITHOUT ROWID", "PRAGMA"} {
		if strings.Contains(strings.ToUpper(sql), banned) {
			t.Errorf("0001_init.sql uses SQLite-only %s", banned)
		}
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []int
		wantErr bool
	}{
		{"sorted", fstest.MapFS{
			"0002_b.sql": {Data: []byte("SELECT 2;")},
			"0001_a.sql": {Data: []byte("SELECT 1;")},
			"0010_c.sql": {Data: []byte("SELECT 10;")},
		}, []int{1, 2, 10}, false},
		{"duplicate version", fstest.MapFS{
			"0001_a.sql": {Data: []byte("SELECT 1;")},
			"0001_b.sql": {Data: []byte("SELECT 1;")},
		}, nil, true},
		{"no underscore", fstest.MapFS{"0001.sql": {Data: []byte("SELECT 1;")}}, nil, true},
		{"short number", fstest.MapFS{"1_a.sql": {Data: []byte("SELECT 1;")}}, nil, true},
		{"zero version", fstest.MapFS{"0000_a.sql": {Data: []byte("SELECT 1;")}}, nil, true},
		{"not a number", fstest.MapFS{"00x1_a.sql": {Data: []byte("SELECT 1;")}}, nil, true},
		{"empty", fstest.MapFS{"0001_a.sql": {Data: []byte("  \n")}}, nil, true},
		{"one backend", fstest.MapFS{
			"0001_a.sql":          {Data: []byte("SELECT 1;")},
			"0002_b.sqlite.sql":   {Data: []byte("SELECT 2;")},
			"0003_c.postgres.sql": {Data: []byte("SELECT 3;")},
		}, []int{1, 2, 3}, false},
		{"one backend, same version", fstest.MapFS{
			"0001_a.sqlite.sql":   {Data: []byte("SELECT 1;")},
			"0001_a.postgres.sql": {Data: []byte("SELECT 1;")},
		}, nil, true},
		{"unknown backend", fstest.MapFS{"0001_a.mysql.sql": {Data: []byte("SELECT 1;")}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := load(tt.files)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(ms) != len(tt.want) {
				t.Fatalf("got %d migrations, want %d", len(ms), len(tt.want))
			}
			for i, v := range tt.want {
				if ms[i].Version != v {
					t.Errorf("ms[%d].Version = %d, want %d", i, ms[i].Version, v)
				}
			}
		})
	}
}

// Every migration but those of SQLite alone runs unchanged on SQLite and
// PostgreSQL (the store's suite applies them to both); this catches the
// usual SQLite-only syntax before a database does.
func TestAllPortable(t *testing.T) {
	for _, m := range All() {
		if m.Only == SQLite {
			continue
		}
		upper := strings.ToUpper(m.SQL)
		for _, banned := range []string{"AUTOINCREMENT", "INSERT OR", "WITHOUT ROWID", "PRAGMA", "DATETIME(", "STRFTIME(", "GLOB "} {
			if strings.Contains(upper, banned) {
				t.Errorf("%04d_%s uses SQLite-only %s", m.Version, m.Name, banned)
			}
		}
	}
}

// TestOnly: a file of one backend names it, its name without it, and runs
// on that backend alone.
func TestOnly(t *testing.T) {
	ms, err := load(fstest.MapFS{
		"0001_a.sql":          {Data: []byte("SELECT 1;")},
		"0002_b.sqlite.sql":   {Data: []byte("SELECT 2;")},
		"0003_c.postgres.sql": {Data: []byte("SELECT 3;")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		name, only string
		sqlite, pg bool
	}{{"a", "", true, true}, {"b", SQLite, true, false}, {"c", PostgreSQL, false, true}} {
		m := ms[i]
		if m.Name != want.name || m.Only != want.only || m.For(SQLite) != want.sqlite || m.For(PostgreSQL) != want.pg {
			t.Errorf("%04d: name %q only %q, for SQLite %v, for PostgreSQL %v; want %+v", m.Version, m.Name, m.Only,
				m.For(SQLite), m.For(PostgreSQL), want)
		}
	}
}
