package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// RevokeToken records the token id jti as revoked until expiresAt, after
// which the token is invalid anyway and the record may be purged. Revoking
// an already revoked jti is not an error.
func (s *Store) RevokeToken(ctx context.Context, jti string, expiresAt time.Time) error {
	if jti == "" {
		return fault.New(fault.Invalid, "token id (jti) is empty")
	}
	_, stamp := now()
	return s.write(ctx, "store: revoke token", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO revoked_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?)
ON CONFLICT (jti) DO NOTHING`, jti, expiresAt.UnixNano(), stamp)
		return err
	})
}

// IsRevoked reports whether any of the token ids jtis has been revoked
// (a token and the tokens it was minted from: one query for the chain).
func (s *Store) IsRevoked(ctx context.Context, jtis ...string) (bool, error) {
	if len(jtis) == 0 {
		return false, nil
	}
	args := make([]any, len(jtis))
	for i, j := range jtis {
		args[i] = j
	}
	q := `SELECT 1 FROM revoked_tokens WHERE jti IN (?` + strings.Repeat(`, ?`, len(jtis)-1) + `) LIMIT 1`
	ok, err := exists(ctx, s.db, q, args...)
	if err != nil {
		return false, dbErr(err, "store: read revocations")
	}
	return ok, nil
}

// PurgeRevoked deletes revocation records of tokens that expired before
// the given time and reports how many were deleted.
func (s *Store) PurgeRevoked(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, "store: purge revocations", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM revoked_tokens WHERE expires_at < ?`, before.UnixNano())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// Setting returns the value of a setting and whether it is set.
func (s *Store) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, dbErr(err, "store: read setting %q", name)
	}
	return v, true, nil
}

// PutSetting sets a setting, replacing any previous value.
func (s *Store) PutSetting(ctx context.Context, name, value string) error {
	if name == "" {
		return fault.New(fault.Invalid, "setting name is empty")
	}
	return s.write(ctx, "store: write setting", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
		return err
	})
}

// SealedSetting returns the unsealed value of a setting written with
// PutSealedSetting and whether it is set. A value sealed under another
// master key is an error wrapping ErrUnseal.
func (s *Store) SealedSetting(ctx context.Context, name string) (string, bool, error) {
	sealed, ok, err := s.Setting(ctx, name)
	if err != nil || !ok {
		return "", ok, err
	}
	plain, err := s.Unseal(sealed)
	if err != nil {
		return "", false, fault.Wrap(fault.KindOf(err), err, "store: setting %q cannot be decrypted", name)
	}
	return string(plain), true, nil
}

// PutSealedSetting seals value with the master key and stores it as a
// setting, replacing any previous value.
func (s *Store) PutSealedSetting(ctx context.Context, name, value string) error {
	sealed, err := s.Seal([]byte(value))
	if err != nil {
		return err
	}
	return s.PutSetting(ctx, name, sealed)
}
