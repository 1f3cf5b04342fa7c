package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// Org is the top tenancy level.
type Org struct {
	// ID is the store-assigned UUID.
	ID string
	// Name is the display name, unique among orgs.
	Name string
	// Abbr is the lower-case abbreviation used in URLs, unique among orgs.
	Abbr string
	// CreatedAt is when the org was created (UTC).
	CreatedAt time.Time
}

// Project belongs to an org and holds spaces, identities and databases.
type Project struct {
	// ID is the store-assigned UUID.
	ID string
	// OrgID is the owning org.
	OrgID string
	// Name is the display name, unique within the org.
	Name string
	// Abbr is the lower-case abbreviation used in URLs, unique within the org.
	Abbr string
}

// Space belongs to a project; every identity is a member of one space.
type Space struct {
	// ID is the store-assigned UUID.
	ID string
	// ProjectID is the owning project.
	ProjectID string
	// Name is unique within the project.
	Name string
	// MCPEnabled tells whether identities of the space may use the MCP face.
	MCPEnabled bool
}

const orgCols = `id, name, abbr, created_at`

func scanOrg(row interface{ Scan(...any) error }) (Org, error) {
	var o Org
	var created int64
	if err := row.Scan(&o.ID, &o.Name, &o.Abbr, &created); err != nil {
		return Org{}, err
	}
	o.CreatedAt = fromNanos(created)
	return o, nil
}

// CreateOrg creates an org. A name or abbreviation already in use is
// fault.Conflict; a malformed one fault.Invalid.
func (s *Store) CreateOrg(ctx context.Context, name, abbr string) (Org, error) {
	if err := checkName("org name", name); err != nil {
		return Org{}, err
	}
	if err := checkAbbr("org abbreviation", abbr); err != nil {
		return Org{}, err
	}
	id, err := newID()
	if err != nil {
		return Org{}, err
	}
	created, stamp := now()
	o := Org{ID: id, Name: name, Abbr: abbr, CreatedAt: created}
	err = s.write(ctx, "store: create org", func(tx *sql.Tx) error {
		if err := absent(ctx, tx, fault.New(fault.Conflict, "org %q already exists", name), `SELECT 1 FROM orgs WHERE name = ?`, name); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "org abbreviation %q is already in use", abbr), `SELECT 1 FROM orgs WHERE abbr = ?`, abbr); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO orgs (id, name, abbr, created_at) VALUES (?, ?, ?, ?)`,
			id, name, abbr, stamp)
		return err
	})
	if err != nil {
		return Org{}, err
	}
	return o, nil
}

// Org returns the org with the given name, or fault.NotFound.
func (s *Store) Org(ctx context.Context, name string) (Org, error) {
	return s.oneOrg(ctx, `SELECT `+orgCols+` FROM orgs WHERE name = ?`, name, "org %q not found", name)
}

// OrgByAbbr returns the org with the given abbreviation, or fault.NotFound.
func (s *Store) OrgByAbbr(ctx context.Context, abbr string) (Org, error) {
	return s.oneOrg(ctx, `SELECT `+orgCols+` FROM orgs WHERE abbr = ?`, abbr, "org abbreviation %q not found", abbr)
}

// OrgByID returns the org with the given id, or fault.NotFound.
func (s *Store) OrgByID(ctx context.Context, id string) (Org, error) {
	return s.oneOrg(ctx, `SELECT `+orgCols+` FROM orgs WHERE id = ?`, id, "org id %q not found", id)
}

func (s *Store) oneOrg(ctx context.Context, query, arg, notFound, what string) (Org, error) {
	o, err := scanOrg(s.db.QueryRowContext(ctx, query, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return Org{}, fault.New(fault.NotFound, notFound, what)
	}
	if err != nil {
		return Org{}, dbErr(err, "store: read org")
	}
	return o, nil
}

// Orgs lists every org, ordered by name.
func (s *Store) Orgs(ctx context.Context) ([]Org, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+orgCols+` FROM orgs ORDER BY name`)
	if err != nil {
		return nil, dbErr(err, "store: list orgs")
	}
	return collect(rows, scanOrg, "store: list orgs")
}

const projectCols = `id, org_id, name, abbr`

func scanProject(row interface{ Scan(...any) error }) (Project, error) {
	var p Project
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.Abbr)
	return p, err
}

// CreateProject creates a project in an org. An unknown org is
// fault.NotFound; a name or abbreviation already used in the org is
// fault.Conflict.
func (s *Store) CreateProject(ctx context.Context, orgID, name, abbr string) (Project, error) {
	if err := checkName("project name", name); err != nil {
		return Project{}, err
	}
	if err := checkAbbr("project abbreviation", abbr); err != nil {
		return Project{}, err
	}
	id, err := newID()
	if err != nil {
		return Project{}, err
	}
	_, stamp := now()
	p := Project{ID: id, OrgID: orgID, Name: name, Abbr: abbr}
	err = s.write(ctx, "store: create project", func(tx *sql.Tx) error {
		if err := present(ctx, tx, fault.New(fault.NotFound, "org id %q not found", orgID), `SELECT 1 FROM orgs WHERE id = ?`, orgID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "project %q already exists in this org", name), `SELECT 1 FROM projects WHERE org_id = ? AND name = ?`, orgID, name); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "project abbreviation %q is already in use in this org", abbr), `SELECT 1 FROM projects WHERE org_id = ? AND abbr = ?`, orgID, abbr); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, org_id, name, abbr, created_at) VALUES (?, ?, ?, ?, ?)`,
			id, orgID, name, abbr, stamp)
		return err
	})
	if err != nil {
		return Project{}, err
	}
	return p, nil
}

// Project returns the project of an org by name, or fault.NotFound.
func (s *Store) Project(ctx context.Context, orgID, name string) (Project, error) {
	return s.oneProject(ctx, `SELECT `+projectCols+` FROM projects WHERE org_id = ? AND name = ?`,
		[]any{orgID, name}, "project %q not found", name)
}

// ProjectByAbbr returns the project of an org by abbreviation, or
// fault.NotFound.
func (s *Store) ProjectByAbbr(ctx context.Context, orgID, abbr string) (Project, error) {
	return s.oneProject(ctx, `SELECT `+projectCols+` FROM projects WHERE org_id = ? AND abbr = ?`,
		[]any{orgID, abbr}, "project abbreviation %q not found", abbr)
}

// ProjectByID returns the project with the given id, or fault.NotFound.
func (s *Store) ProjectByID(ctx context.Context, id string) (Project, error) {
	return s.oneProject(ctx, `SELECT `+projectCols+` FROM projects WHERE id = ?`,
		[]any{id}, "project id %q not found", id)
}

func (s *Store) oneProject(ctx context.Context, query string, args []any, notFound, what string) (Project, error) {
	p, err := scanProject(s.db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Project{}, fault.New(fault.NotFound, notFound, what)
	}
	if err != nil {
		return Project{}, dbErr(err, "store: read project")
	}
	return p, nil
}

// Projects lists the projects of an org, ordered by name.
func (s *Store) Projects(ctx context.Context, orgID string) ([]Project, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+projectCols+` FROM projects WHERE org_id = ? ORDER BY name`, orgID)
	if err != nil {
		return nil, dbErr(err, "store: list projects")
	}
	return collect(rows, scanProject, "store: list projects")
}

const spaceCols = `id, project_id, name, mcp_enabled`

func scanSpace(row interface{ Scan(...any) error }) (Space, error) {
	var sp Space
	var mcp int64
	if err := row.Scan(&sp.ID, &sp.ProjectID, &sp.Name, &mcp); err != nil {
		return Space{}, err
	}
	sp.MCPEnabled = mcp != 0
	return sp, nil
}

// CreateSpace creates a space in a project, with the MCP face on or off. An
// unknown project is fault.NotFound; a name already used in the project is
// fault.Conflict.
func (s *Store) CreateSpace(ctx context.Context, projectID, name string, mcp bool) (Space, error) {
	if err := checkName("space name", name); err != nil {
		return Space{}, err
	}
	id, err := newID()
	if err != nil {
		return Space{}, err
	}
	_, stamp := now()
	sp := Space{ID: id, ProjectID: projectID, Name: name, MCPEnabled: mcp}
	err = s.write(ctx, "store: create space", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, projectID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "space %q already exists in this project", name), `SELECT 1 FROM spaces WHERE project_id = ? AND name = ?`, projectID, name); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO spaces (id, project_id, name, mcp_enabled, created_at) VALUES (?, ?, ?, ?, ?)`,
			id, projectID, name, boolInt(mcp), stamp)
		return err
	})
	if err != nil {
		return Space{}, err
	}
	return sp, nil
}

// Space returns the space of a project by name, or fault.NotFound.
func (s *Store) Space(ctx context.Context, projectID, name string) (Space, error) {
	return s.oneSpace(ctx, `SELECT `+spaceCols+` FROM spaces WHERE project_id = ? AND name = ?`,
		[]any{projectID, name}, "space %q not found", name)
}

// SpaceByID returns the space with the given id, or fault.NotFound.
func (s *Store) SpaceByID(ctx context.Context, id string) (Space, error) {
	return s.oneSpace(ctx, `SELECT `+spaceCols+` FROM spaces WHERE id = ?`,
		[]any{id}, "space id %q not found", id)
}

func (s *Store) oneSpace(ctx context.Context, query string, args []any, notFound, what string) (Space, error) {
	sp, err := scanSpace(prepared{s: s}.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Space{}, fault.New(fault.NotFound, notFound, what)
	}
	if err != nil {
		return Space{}, dbErr(err, "store: read space")
	}
	return sp, nil
}

// Spaces lists the spaces of a project, ordered by name.
func (s *Store) Spaces(ctx context.Context, projectID string) ([]Space, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+spaceCols+` FROM spaces WHERE project_id = ? ORDER BY name`, projectID)
	if err != nil {
		return nil, dbErr(err, "store: list spaces")
	}
	return collect(rows, scanSpace, "store: list spaces")
}

// SetSpaceMCP switches the MCP face of a space on or off. An unknown space
// is fault.NotFound.
func (s *Store) SetSpaceMCP(ctx context.Context, spaceID string, on bool) error {
	return s.write(ctx, "store: update space", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE spaces SET mcp_enabled = ? WHERE id = ?`, boolInt(on), spaceID)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "space id %q not found", spaceID))
	})
}

// projectExists returns fault.NotFound unless the project exists.
func projectExists(ctx context.Context, q querier, projectID string) error {
	return present(ctx, q, fault.New(fault.NotFound, "project id %q not found", projectID),
		`SELECT 1 FROM projects WHERE id = ?`, projectID)
}

// present returns notFound unless query yields a row.
func present(ctx context.Context, q querier, notFound *fault.Error, query string, args ...any) error {
	ok, err := exists(ctx, q, query, args...)
	if err != nil {
		return err
	}
	if !ok {
		return notFound
	}
	return nil
}

// absent returns conflict if query yields a row.
func absent(ctx context.Context, q querier, conflict *fault.Error, query string, args ...any) error {
	ok, err := exists(ctx, q, query, args...)
	if err != nil {
		return err
	}
	if ok {
		return conflict
	}
	return nil
}

// collect scans every row with scan and closes rows. The result is never
// nil.
func collect[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error), op string) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, dbErr(err, "%s", op)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "%s", op)
	}
	return out, nil
}
