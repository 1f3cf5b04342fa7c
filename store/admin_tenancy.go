package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// The functions of this file complete tenancy for the admin API: renames
// and deletes. Abbreviations and space names are not renamed: tokens carry
// them, so changing one would silently invalidate every live token.

// RenameOrg changes the display name of an org and returns it. An unknown
// id is fault.NotFound; a name another org uses fault.Conflict; a
// malformed one fault.Invalid.
func (s *Store) RenameOrg(ctx context.Context, id, name string) (Org, error) {
	if err := checkName("org name", name); err != nil {
		return Org{}, err
	}
	var out Org
	err := s.write(ctx, "store: rename org", func(tx *sql.Tx) error {
		if err := absent(ctx, tx, fault.New(fault.Conflict, "org %q already exists", name),
			`SELECT 1 FROM orgs WHERE name = ? AND id <> ?`, name, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE orgs SET name = ? WHERE id = ?`, name, id)
		if err != nil {
			return err
		}
		if err := mustAffect(res, fault.New(fault.NotFound, "org id %q not found", id)); err != nil {
			return err
		}
		out, err = scanOrg(tx.QueryRowContext(ctx, `SELECT `+orgCols+` FROM orgs WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return Org{}, err
	}
	return out, nil
}

// DeleteOrg deletes an org that has no project left. An unknown id is
// fault.NotFound; an org with projects fault.Conflict naming them.
func (s *Store) DeleteOrg(ctx context.Context, id string) error {
	return s.write(ctx, "store: delete org", func(tx *sql.Tx) error {
		left, err := names(ctx, tx, `SELECT abbr FROM projects WHERE org_id = ? ORDER BY abbr`, id)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fault.New(fault.Conflict, "the org still has projects [%s]: delete them first", strings.Join(left, ", "))
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM orgs WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "org id %q not found", id))
	})
}

// RenameProject changes the display name of a project and returns it. An
// unknown id is fault.NotFound; a name another project of the org uses
// fault.Conflict; a malformed one fault.Invalid.
func (s *Store) RenameProject(ctx context.Context, id, name string) (Project, error) {
	if err := checkName("project name", name); err != nil {
		return Project{}, err
	}
	var out Project
	err := s.write(ctx, "store: rename project", func(tx *sql.Tx) error {
		cur, err := scanProject(tx.QueryRowContext(ctx, `SELECT `+projectCols+` FROM projects WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fault.New(fault.NotFound, "project id %q not found", id)
		}
		if err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "project %q already exists in this org", name),
			`SELECT 1 FROM projects WHERE org_id = ? AND name = ? AND id <> ?`, cur.OrgID, name, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE projects SET name = ? WHERE id = ?`, name, id); err != nil {
			return err
		}
		cur.Name = name
		out = cur
		return nil
	})
	if err != nil {
		return Project{}, err
	}
	return out, nil
}

// DeleteProject deletes a project together with its spaces, its whole
// policy (templates, rules, bindings, scopes, locks) and its custom API
// definitions, in one transaction.
// It refuses (fault.Conflict, naming them) while identities or databases
// remain: those are removed one by one, deliberately. An unknown id is
// fault.NotFound.
func (s *Store) DeleteProject(ctx context.Context, id string) error {
	return s.write(ctx, "store: delete project", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, id); err != nil {
			return err
		}
		ids, err := names(ctx, tx, `SELECT name FROM identities WHERE project_id = ? ORDER BY name`, id)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			return fault.New(fault.Conflict, "the project still has identities [%s]: delete them first", strings.Join(ids, ", "))
		}
		dbs, err := names(ctx, tx, `SELECT type || '/' || schema_name FROM databases WHERE project_id = ? ORDER BY type, schema_name`, id)
		if err != nil {
			return err
		}
		if len(dbs) > 0 {
			return fault.New(fault.Conflict, "the project still has databases [%s]: remove them first", strings.Join(dbs, ", "))
		}
		for _, q := range []string{
			`DELETE FROM bindings WHERE project_id = ?`,
			`DELETE FROM template_rules WHERE template_id IN (SELECT id FROM templates WHERE project_id = ?)`,
			`DELETE FROM templates WHERE project_id = ?`,
			`DELETE FROM scopes WHERE project_id = ?`,
			`DELETE FROM locks WHERE project_id = ?`,
			`DELETE FROM custom_apis WHERE project_id = ?`,
			`DELETE FROM spaces WHERE project_id = ?`,
			`DELETE FROM projects WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteSpace deletes a space no identity belongs to. An unknown id is
// fault.NotFound; a space with members fault.Conflict naming them.
func (s *Store) DeleteSpace(ctx context.Context, id string) error {
	return s.write(ctx, "store: delete space", func(tx *sql.Tx) error {
		members, err := names(ctx, tx, `SELECT name FROM identities WHERE space_id = ? ORDER BY name`, id)
		if err != nil {
			return err
		}
		if len(members) > 0 {
			return fault.New(fault.Conflict, "the space still has identities [%s]: move or delete them first", strings.Join(members, ", "))
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM spaces WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "space id %q not found", id))
	})
}

// DeleteIdentity deletes an identity; its live tokens stop verifying
// within the verifier's cache time. An identity that started AI sessions
// is kept for their journal (fault.Conflict: disable it instead). An
// unknown id is fault.NotFound.
func (s *Store) DeleteIdentity(ctx context.Context, id string) error {
	return s.write(ctx, "store: delete identity", func(tx *sql.Tx) error {
		if err := absent(ctx, tx, fault.New(fault.Conflict, "the identity has AI sessions whose journal must be kept: disable it instead"),
			`SELECT 1 FROM sessions WHERE identity_id = ?`, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM identities WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "identity id %q not found", id))
	})
}

// names reads a one-column text query.
func names(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r interface{ Scan(...any) error }) (string, error) {
		var v string
		err := r.Scan(&v)
		return v, err
	}, "store: read names")
}
