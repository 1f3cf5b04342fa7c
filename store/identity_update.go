package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/littlebitlabs/minimal/fault"
)

// UpdateIdentity rewrites the mutable fields of the identity with id in.ID
// — Kind, SpaceID, Roles, Claims, KeyType and Enabled — and returns it as
// stored. Name, ProjectID and CreatedAt cannot change and are ignored;
// UpdatedAt is set by the store. The checks are those of CreateIdentity
// (fault.Invalid), plus: an unknown id is fault.NotFound, and so is a
// SpaceID that is not a space of the identity's project. Callers that keep
// live tokens (auth) see the new roles and enabled flag through the change
// counter.
func (s *Store) UpdateIdentity(ctx context.Context, in Identity) (Identity, error) {
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
	_, stamp := now()
	var out Identity
	err = s.write(ctx, "store: update identity", func(tx *sql.Tx) error {
		cur, err := scanIdentity(tx.QueryRowContext(ctx, `SELECT `+identityCols+` FROM identities WHERE id = ?`, in.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fault.New(fault.NotFound, "identity id %q not found", in.ID)
		}
		if err != nil {
			return err
		}
		if err := present(ctx, tx, fault.New(fault.NotFound, "space id %q not found in the project of identity %q", in.SpaceID, cur.Name),
			`SELECT 1 FROM spaces WHERE id = ? AND project_id = ?`, in.SpaceID, cur.ProjectID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE identities SET kind = ?, space_id = ?, roles = ?, key_type = ?, claims = ?, enabled = ?, updated_at = ?
WHERE id = ?`, in.Kind, in.SpaceID, string(rolesJSON), in.KeyType, string(claimsJSON), boolInt(in.Enabled), stamp, in.ID); err != nil {
			return err
		}
		out, err = scanIdentity(tx.QueryRowContext(ctx, `SELECT `+identityCols+` FROM identities WHERE id = ?`, in.ID))
		return err
	})
	if err != nil {
		return Identity{}, err
	}
	return out, nil
}
