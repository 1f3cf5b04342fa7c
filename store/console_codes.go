package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// consoleCodePrefix names the settings rows that hold one-time sign-in
// codes of the web console: the prefix and the code's hash.
const consoleCodePrefix = "console_code:"

// ConsoleCode is what a one-time sign-in code of the web console is
// exchanged for: a token of an identity, minted when the code is taken.
// The code itself is never stored, only its hash.
type ConsoleCode struct {
	IdentityID string        `json:"identity_id"`
	Roles      []string      `json:"roles,omitempty"`
	KeyType    string        `json:"key_type,omitempty"`
	TTL        time.Duration `json:"ttl"`
	ExpiresAt  time.Time     `json:"expires_at"`
}

// PutConsoleCode stores a sign-in code by its hash (a hex digest of a
// high-entropy code) and deletes the codes that have expired. Codes are
// records, not configuration: the change counter is left alone.
func (s *Store) PutConsoleCode(ctx context.Context, hash string, c ConsoleCode) error {
	if hash == "" || c.IdentityID == "" {
		return fault.New(fault.Invalid, "a console code needs a hash and an identity")
	}
	v, err := json.Marshal(c)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: encode console code")
	}
	now := time.Now()
	return s.record(ctx, "store: write console code", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name, value FROM settings WHERE name LIKE ?`, consoleCodePrefix+"%")
		if err != nil {
			return err
		}
		var stale []string
		for rows.Next() {
			var name, value string
			if err := rows.Scan(&name, &value); err != nil {
				rows.Close()
				return err
			}
			var old ConsoleCode
			if !strings.HasPrefix(name, consoleCodePrefix) {
				continue
			}
			if json.Unmarshal([]byte(value), &old) != nil || !now.Before(old.ExpiresAt) {
				stale = append(stale, name)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, name := range stale {
			if _, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE name = ?`, name); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)`, consoleCodePrefix+hash, string(v))
		return err
	})
}

// TakeConsoleCode deletes the code stored under hash and returns it when
// it had not expired at the given time. A code is taken once: of two
// callers racing for it, one gets it. An unknown, taken or expired code
// is one Unauthenticated error, so a caller learns nothing about which.
func (s *Store) TakeConsoleCode(ctx context.Context, hash string, at time.Time) (ConsoleCode, error) {
	refused := fault.New(fault.Unauthenticated, "invalid or expired sign-in code: run 'minimal console-link' for a new one")
	// A code that is not there is refused on a plain read: the exchange
	// answers anyone, and a guess must not take the store's write lock,
	// which every audit and journal write of the gateway waits for.
	var one int
	switch err := s.db.QueryRowContext(ctx, `SELECT 1 FROM settings WHERE name = ?`, consoleCodePrefix+hash).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return ConsoleCode{}, refused
	case err != nil:
		return ConsoleCode{}, dbErr(err, "store: read console code")
	}
	var c ConsoleCode
	found := false
	err := s.record(ctx, "store: take console code", func(tx *sql.Tx) error {
		// One statement deletes and reads: of two callers racing for a
		// code, only one gets its row back.
		var value string
		err := tx.QueryRowContext(ctx, `DELETE FROM settings WHERE name = ? RETURNING value`, consoleCodePrefix+hash).Scan(&value)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = json.Unmarshal([]byte(value), &c) == nil
		return nil
	})
	if err != nil {
		return ConsoleCode{}, err
	}
	if !found || !at.Before(c.ExpiresAt) {
		return ConsoleCode{}, refused
	}
	return c, nil
}
