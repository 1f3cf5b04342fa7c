package miniapp

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/store"
)

// The names the drop-in mode's private control plane uses. The mi
// databases are named so that schema-name order is mini-app-mcp's
// override order: the legacy pair over the project dir over the user dir.
const (
	LocalOrg      = "local"
	LocalIdentity = "local"
	SchemaLegacy  = "legacy"
	SchemaProject = "project"
	SchemaUser    = "user"
)

// DropInConfig is mini-app-mcp's directory configuration.
type DropInConfig struct {
	UserDir, ProjectDir       string
	LegacySchema, LegacyDB    string
	userDirSet, projectDirSet bool
}

// EnvFile is the file mini-app-mcp reads its environment from, in the
// working directory. Variables already set win over it.
const EnvFile = ".mini-app-mcp.env"

// DropInFromEnv reads MINI_APP_USER_DIR (default ~/.mini-app),
// MINI_APP_PROJECT_DIR (default ./.mini-app) and the legacy pair
// MINI_APP_SCHEMA + MINI_APP_DB from the environment and from
// ./.mini-app-mcp.env.
func DropInFromEnv(getenv func(string) string, cwd string) (DropInConfig, error) {
	file := map[string]string{}
	if f, err := os.Open(filepath.Join(cwd, EnvFile)); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			line = strings.TrimPrefix(line, "export ")
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			file[strings.TrimSpace(k)] = v
		}
		f.Close()
	}
	get := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return file[k]
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if strings.HasPrefix(p, "~/") {
			if h, err := os.UserHomeDir(); err == nil {
				return filepath.Join(h, p[2:])
			}
		}
		return filepath.Join(cwd, p)
	}
	c := DropInConfig{UserDir: abs(get("MINI_APP_USER_DIR")), ProjectDir: abs(get("MINI_APP_PROJECT_DIR")),
		LegacySchema: abs(get("MINI_APP_SCHEMA")), LegacyDB: abs(get("MINI_APP_DB"))}
	c.userDirSet, c.projectDirSet = c.UserDir != "", c.ProjectDir != ""
	if c.UserDir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return c, fault.Wrap(fault.Invalid, err, "config error: MINI_APP_USER_DIR is not set and there is no home directory")
		}
		c.UserDir = filepath.Join(h, ".mini-app")
	}
	if c.ProjectDir == "" {
		c.ProjectDir = filepath.Join(cwd, ".mini-app")
	}
	if (c.LegacySchema == "") != (c.LegacyDB == "") {
		c.LegacySchema, c.LegacyDB = "", "" // both are needed, as in mini-app-mcp
	}
	return c, nil
}

// Local is the drop-in mode's private gateway state: a temporary control
// plane with one project mounting the directories, and the token of its
// one identity (kind mcp, role admin).
type Local struct {
	Store  *store.Store
	Key    []byte
	Token  string
	Config Config
	dir    string
	dirs   []string
}

// Dirs are the scope directories mounted, in mount order. Making each
// table's file there (mi.CreateFiles, as mini-app-mcp does when it
// mounts a directory) is the mounting code's setup, not a tool's: package
// miniapp touches no table file.
func (l *Local) Dirs() []string { return l.dirs }

// DropIn builds the private control plane under a fresh directory of
// os.TempDir. The user dir is created as mini-app-mcp creates it; a
// missing project dir is not. The legacy pair is mounted through a
// directory of symbolic links in the mini-app layout.
func DropIn(ctx context.Context, c DropInConfig) (_ *Local, err error) {
	tmp, err := os.MkdirTemp("", "minimal-dropin-")
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "io error: temporary control plane")
	}
	l := &Local{dir: tmp, Config: Config{Mounted: true}}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if err := os.MkdirAll(c.UserDir, 0o755); err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "io error: %s", c.UserDir)
	}
	if l.Store, err = store.Open(ctx, filepath.Join(tmp, "control")); err != nil {
		return nil, err
	}
	if l.Key, err = auth.SigningKey(ctx, l.Store); err != nil {
		return nil, err
	}
	org, err := l.Store.CreateOrg(ctx, LocalOrg, LocalOrg)
	if err != nil {
		return nil, err
	}
	proj, err := l.Store.CreateProject(ctx, org.ID, LocalOrg, LocalOrg)
	if err != nil {
		return nil, err
	}
	space, err := l.Store.CreateSpace(ctx, proj.ID, "main", true)
	if err != nil {
		return nil, err
	}
	mounts := [][2]string{{SchemaUser, c.UserDir}}
	if fi, err := os.Stat(c.ProjectDir); err == nil && fi.IsDir() {
		mounts = append(mounts, [2]string{SchemaProject, c.ProjectDir})
	}
	if c.LegacySchema != "" {
		dir, table, err := legacyDir(tmp, c.LegacySchema, c.LegacyDB)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, [2]string{SchemaLegacy, dir})
		l.Config.DefaultSchema, l.Config.DefaultTable = SchemaLegacy, table
	}
	for _, m := range mounts {
		l.dirs = append(l.dirs, m[1])
		if _, err := l.Store.AddDatabase(ctx, store.Database{ProjectID: proj.ID, Type: "mi", Schema: m[0], DSN: m[1]}); err != nil {
			return nil, err
		}
	}
	id, err := l.Store.CreateIdentity(ctx, store.Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: LocalIdentity,
		Kind: store.KindMCP, Roles: []string{"admin"}, KeyType: "crud", Enabled: true})
	if err != nil {
		return nil, err
	}
	if l.Token, err = auth.Mint(ctx, l.Store, l.Key, id, auth.MintOptions{TTL: 365 * 24 * time.Hour}); err != nil {
		return nil, err
	}
	return l, nil
}

// legacyDir lays the legacy schema + db pair out as a one-table scope
// directory of symbolic links, named by the yaml's table.
func legacyDir(tmp, schemaPath, dbPath string) (string, string, error) {
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		return "", "", fault.Wrap(fault.Invalid, err, "config error: MINI_APP_SCHEMA")
	}
	info, err := mi.ParseTable("t", b)
	if err != nil {
		return "", "", fault.New(fault.Invalid, "schema parse error: %s", schemaPath)
	}
	dir := filepath.Join(tmp, "legacy")
	if err := os.MkdirAll(filepath.Join(dir, info.Table), 0o755); err != nil {
		return "", "", fault.Wrap(fault.Internal, err, "io error")
	}
	if err := os.Symlink(schemaPath, mi.SchemaPath(dir, info.Table)); err != nil {
		return "", "", fault.Wrap(fault.Internal, err, "io error")
	}
	if err := os.Symlink(dbPath, mi.DBPath(dir, info.Table)); err != nil {
		return "", "", fault.Wrap(fault.Internal, err, "io error")
	}
	return dir, info.Table, nil
}

// Close closes the store and removes the temporary control plane.
func (l *Local) Close() {
	if l.Store != nil {
		l.Store.Close()
	}
	os.RemoveAll(l.dir)
}
