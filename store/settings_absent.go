package store

import (
	"context"
	"database/sql"

	"github.com/littlebitlabs/minimal/fault"
)

// PutSettingIfAbsent sets a setting unless it is already set, and reports
// whether it wrote. Two processes racing to create the same setting (two
// replicas starting at once on an empty control plane) both succeed, and
// the first value stays: read the setting back to learn which one that is.
func (s *Store) PutSettingIfAbsent(ctx context.Context, name, value string) (bool, error) {
	if name == "" {
		return false, fault.New(fault.Invalid, "setting name is empty")
	}
	var wrote bool
	err := s.write(ctx, "store: write setting", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
ON CONFLICT (name) DO NOTHING`, name, value)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		wrote = n > 0
		return err
	})
	return wrote, err
}

// PutSealedSettingIfAbsent is PutSettingIfAbsent for a value sealed with
// the master key, as PutSealedSetting writes it.
func (s *Store) PutSealedSettingIfAbsent(ctx context.Context, name, value string) (bool, error) {
	sealed, err := s.Seal([]byte(value))
	if err != nil {
		return false, err
	}
	return s.PutSettingIfAbsent(ctx, name, sealed)
}
