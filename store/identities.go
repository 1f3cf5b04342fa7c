package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// Identity is who acts: a user, a service or an MCP agent, member of one
// space of a project, holding roles and a CRUD key_type ceiling.
type Identity struct {
	// ID is the store-assigned UUID; ignored by CreateIdentity.
	ID string
	// ProjectID is the owning project.
	ProjectID string
	// SpaceID is the space the identity belongs to; it must be a space of
	// ProjectID.
	SpaceID string
	// Name is unique within the project.
	Name string
	// Kind is KindUser, KindService or KindMCP.
	Kind string
	// Roles are the role names held, without duplicates; never nil when
	// read from the store.
	Roles []string
	// KeyType is the 4-character CRUD mask ("crud", "-r--", …), the most
	// the identity's tokens may carry.
	KeyType string
	// Claims are extra token claims, stored as a JSON object. After a round
	// trip through the store numbers are float64; never nil when read.
	Claims map[string]any
	// Enabled is false for a disabled identity, whose tokens are refused.
	// The zero value creates a disabled identity.
	Enabled bool
	// CreatedAt and UpdatedAt are set by the store (UTC).
	CreatedAt, UpdatedAt time.Time
}

const identityCols = `id, project_id, space_id, name, kind, roles, key_type, claims, enabled, created_at, updated_at`

func scanIdentity(row interface{ Scan(...any) error }) (Identity, error) {
	var id Identity
	var roles, claims string
	var enabled, created, updated int64
	if err := row.Scan(&id.ID, &id.ProjectID, &id.SpaceID, &id.Name, &id.Kind, &roles,
		&id.KeyType, &claims, &enabled, &created, &updated); err != nil {
		return Identity{}, err
	}
	if err := json.Unmarshal([]byte(roles), &id.Roles); err != nil {
		return Identity{}, fault.Wrap(fault.Internal, err, "store: identity %q has malformed roles", id.Name)
	}
	if id.Roles == nil {
		id.Roles = []string{}
	}
	if err := json.Unmarshal([]byte(claims), &id.Claims); err != nil {
		return Identity{}, fault.Wrap(fault.Internal, err, "store: identity %q has malformed claims", id.Name)
	}
	if id.Claims == nil {
		id.Claims = map[string]any{}
	}
	id.Enabled = enabled != 0
	id.CreatedAt = fromNanos(created)
	id.UpdatedAt = fromNanos(updated)
	return id, nil
}

// CreateIdentity stores a new identity and returns it as stored, with ID,
// CreatedAt and UpdatedAt assigned. It checks the name, that Kind is user,
// service or mcp, that KeyType is a valid CRUD mask, the role names, and
// that Claims encode as JSON (fault.Invalid); that the project exists and
// SpaceID is one of its spaces (fault.NotFound); and that the name is free
// in the project (fault.Conflict).
func (s *Store) CreateIdentity(ctx context.Context, in Identity) (Identity, error) {
	if err := checkName("identity name", in.Name); err != nil {
		return Identity{}, err
	}
	if err := checkKind(in.Kind); err != nil {
		return Identity{}, err
	}
	if err := checkMask("key_type", in.KeyType); err != nil {
		return Identity{}, err
	}
	roles, err := normRoles(in.Roles)
	if err != nil {
		return Identity{}, err
	}
	rolesJSON, err := json.Marshal(roles)
	if err != nil {
		return Identity{}, fault.Wrap(fault.Internal, err, "store: encode roles")
	}
	claims := in.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	claimsJSON, err := json.Marshal(claims)
	if err != nil {
		return Identity{}, fault.Wrap(fault.Invalid, err, "identity claims cannot be encoded as JSON")
	}
	out := in
	out.Roles = roles
	out.Claims = nil
	if err := json.Unmarshal(claimsJSON, &out.Claims); err != nil {
		return Identity{}, fault.Wrap(fault.Internal, err, "store: decode claims")
	}
	if out.ID, err = newID(); err != nil {
		return Identity{}, err
	}
	var stamp int64
	out.CreatedAt, stamp = now()
	out.UpdatedAt = out.CreatedAt
	err = s.write(ctx, "store: create identity", func(tx *sql.Tx) error {
		if err := projectExists(ctx, tx, in.ProjectID); err != nil {
			return err
		}
		if err := present(ctx, tx, fault.New(fault.NotFound, "space id %q not found in this project", in.SpaceID),
			`SELECT 1 FROM spaces WHERE id = ? AND project_id = ?`, in.SpaceID, in.ProjectID); err != nil {
			return err
		}
		if err := absent(ctx, tx, fault.New(fault.Conflict, "identity %q already exists in this project", in.Name),
			`SELECT 1 FROM identities WHERE project_id = ? AND name = ?`, in.ProjectID, in.Name); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO identities (`+identityCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			out.ID, out.ProjectID, out.SpaceID, out.Name, out.Kind, string(rolesJSON), out.KeyType,
			string(claimsJSON), boolInt(out.Enabled), stamp, stamp)
		return err
	})
	if err != nil {
		return Identity{}, err
	}
	return out, nil
}

// Identity returns the identity of a project by name, or fault.NotFound.
func (s *Store) Identity(ctx context.Context, projectID, name string) (Identity, error) {
	return s.oneIdentity(ctx, `SELECT `+identityCols+` FROM identities WHERE project_id = ? AND name = ?`,
		[]any{projectID, name}, "identity %q not found", name)
}

// IdentityByID returns the identity with the given id, or fault.NotFound.
func (s *Store) IdentityByID(ctx context.Context, id string) (Identity, error) {
	return s.oneIdentity(ctx, `SELECT `+identityCols+` FROM identities WHERE id = ?`,
		[]any{id}, "identity id %q not found", id)
}

func (s *Store) oneIdentity(ctx context.Context, query string, args []any, notFound, what string) (Identity, error) {
	id, err := scanIdentity(s.db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Identity{}, fault.New(fault.NotFound, notFound, what)
	}
	if err != nil {
		return Identity{}, dbErr(err, "store: read identity")
	}
	return id, nil
}

// ListIdentities lists the identities of a project, ordered by name. An
// unknown project yields an empty list.
func (s *Store) ListIdentities(ctx context.Context, projectID string) ([]Identity, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+identityCols+` FROM identities WHERE project_id = ? ORDER BY name`, projectID)
	if err != nil {
		return nil, dbErr(err, "store: list identities")
	}
	return collect(rows, scanIdentity, "store: list identities")
}

// SetIdentityEnabled enables or disables an identity. An unknown id is
// fault.NotFound.
func (s *Store) SetIdentityEnabled(ctx context.Context, id string, on bool) error {
	_, stamp := now()
	return s.write(ctx, "store: update identity", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE identities SET enabled = ?, updated_at = ? WHERE id = ?`, boolInt(on), stamp, id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "identity id %q not found", id))
	})
}

// SetIdentityRoles replaces the roles of an identity (duplicates dropped).
// An unknown id is fault.NotFound; a malformed role name fault.Invalid.
func (s *Store) SetIdentityRoles(ctx context.Context, id string, roles []string) error {
	roles, err := normRoles(roles)
	if err != nil {
		return err
	}
	rolesJSON, err := json.Marshal(roles)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: encode roles")
	}
	_, stamp := now()
	return s.write(ctx, "store: update identity", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE identities SET roles = ?, updated_at = ? WHERE id = ?`, string(rolesJSON), stamp, id)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "identity id %q not found", id))
	})
}
