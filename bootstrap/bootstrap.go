package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/dialects/mi"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// Names of what the bootstrap creates.
const (
	Org      = "demo"
	Project  = "demo"
	Space    = "main"
	Admin    = "admin"
	Agent    = "agent"
	MiSchema = "app"
	// TokenTTL is the lifetime of the token files; they are re-minted at
	// start when missing, expired or no longer valid.
	TokenTTL = 30 * 24 * time.Hour
)

const notesSchema = `table: notes
title: Notes
description: Sample mini-app table created by the gateway's first start.
fields:
  - name: title
    type: string
    required: true
    description: One-line title.
  - name: body
    type: string
    description: Free text.
`

var sampleNotes = []map[string]any{
	{"title": "Welcome to Minimal", "body": "This table lives in a mini-app directory under the data dir."},
	{"title": "Read me over REST", "body": "GET /minimal/api/rest/auto/v1/demo/demo/mi/app/notes?ps=10&pg=0"},
	{"title": "Tokens", "body": "admin.token and agent.token sit next to control.db (mode 0600)."},
}

// Ensure bootstraps an empty store and (re)writes the token files. It
// returns the paths of the token files.
func Ensure(ctx context.Context, st *store.Store, dataDir string, key []byte, ver *auth.Verifier, log *slog.Logger) ([]string, error) {
	org, err := getOrCreate(func() (store.Org, error) { return st.OrgByAbbr(ctx, Org) },
		func() (store.Org, error) { return st.CreateOrg(ctx, Org, Org) })
	if err != nil {
		return nil, err
	}
	proj, err := getOrCreate(func() (store.Project, error) { return st.ProjectByAbbr(ctx, org.ID, Project) },
		func() (store.Project, error) { return st.CreateProject(ctx, org.ID, Project, Project) })
	if err != nil {
		return nil, err
	}
	space, err := getOrCreate(func() (store.Space, error) { return st.Space(ctx, proj.ID, Space) },
		func() (store.Space, error) { return st.CreateSpace(ctx, proj.ID, Space, true) })
	if err != nil {
		return nil, err
	}
	var ids []store.Identity
	for _, spec := range []struct{ name, kind string }{{Admin, "user"}, {Agent, "mcp"}} {
		id, err := getOrCreate(func() (store.Identity, error) { return st.Identity(ctx, proj.ID, spec.name) },
			func() (store.Identity, error) {
				return st.CreateIdentity(ctx, store.Identity{
					ProjectID: proj.ID, SpaceID: space.ID, Name: spec.name, Kind: spec.kind,
					Roles: []string{"admin"}, KeyType: "crud", Enabled: true,
				})
			})
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := ensureNotes(ctx, st, proj.ID, dataDir, log); err != nil {
		return nil, err
	}
	var files []string
	for _, id := range ids {
		path := filepath.Join(dataDir, id.Name+".token")
		if err := ensureToken(ctx, st, key, ver, id, path); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// getOrCreate reads a thing, creating it when it is not found. When the
// create meets a conflict, another process (a replica starting at the same
// time on the same control plane) created it in between: read it again.
func getOrCreate[T any](get, create func() (T, error)) (T, error) {
	v, err := get()
	if err == nil || fault.KindOf(err) != fault.NotFound {
		return v, err
	}
	v, err = create()
	if fault.KindOf(err) == fault.Conflict {
		return get()
	}
	return v, err
}

// ensureNotes registers the mini-app database and creates and fills the
// sample table the first time.
func ensureNotes(ctx context.Context, st *store.Store, projectID, dataDir string, log *slog.Logger) error {
	dbs, err := st.DatabasesOf(ctx, projectID)
	if err != nil {
		return err
	}
	for _, d := range dbs {
		if d.Type == "mi" && d.Schema == MiSchema {
			return nil
		}
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	dir := filepath.Join(abs, "mini-app", MiSchema)
	if _, err := os.Stat(filepath.Join(dir, "notes", "schema.yaml")); os.IsNotExist(err) {
		if err := mi.CreateTable(dir, "notes", []byte(notesSchema)); err != nil {
			return fmt.Errorf("bootstrap: create notes table: %w", err)
		}
		if err := fillNotes(ctx, dir); err != nil {
			return err
		}
		log.Info("created sample mini-app table", "dir", filepath.Join(dir, "notes"))
	}
	_, err = st.AddDatabase(ctx, store.Database{ProjectID: projectID, Type: "mi", Schema: MiSchema, DSN: dir})
	if fault.KindOf(err) == fault.Conflict {
		// A replica starting at the same time registered its own copy first.
		return nil
	}
	return err
}

func fillNotes(ctx context.Context, dir string) error {
	src, err := dialects.Open(ctx, "mi", dialects.Config{DSN: dir, Schema: MiSchema})
	if err != nil {
		return err
	}
	defer src.Close()
	rows := make([][]any, len(sampleNotes))
	for i, n := range sampleNotes {
		rows[i] = []any{n["body"], n["title"]}
	}
	_, err = src.Write(ctx, &query.Plan{
		Action: query.Insert, Type: "mi", Schema: MiSchema, Table: "notes",
		Columns: []string{"body", "title"}, Rows: rows,
	})
	if err != nil {
		return fmt.Errorf("bootstrap: fill notes: %w", err)
	}
	return nil
}

// ensureToken keeps a valid token in path, minting a new one when the file
// is missing or its token no longer verifies.
func ensureToken(ctx context.Context, st *store.Store, key []byte, ver *auth.Verifier, id store.Identity, path string) error {
	if b, err := os.ReadFile(path); err == nil {
		if p, err := ver.Verify(ctx, strings.TrimSpace(string(b))); err == nil && time.Until(p.ExpiresAt) > 24*time.Hour {
			return nil
		}
	}
	tok, err := auth.Mint(ctx, st, key, id, auth.MintOptions{TTL: TokenTTL})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
