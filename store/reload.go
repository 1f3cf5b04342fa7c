package store

import (
	"context"
	"database/sql"

	"github.com/littlebitlabs/minimal/fault"
)

// TouchDatabase asks every server to read the tables of the database
// (projectID, typ, schema) again, changing nothing else: its updated_at
// moves, and the change counter with it (`minimal db reload`, the admin
// API's reload). Servers keep its pool and drop its cached tables when
// they see the change. An absent database is fault.NotFound.
func (s *Store) TouchDatabase(ctx context.Context, projectID, typ, schema string) (Database, error) {
	_, stamp := now()
	err := s.write(ctx, "store: reload database", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE databases SET updated_at = ? WHERE project_id = ? AND type = ? AND schema_name = ?`,
			stamp, projectID, typ, schema)
		if err != nil {
			return err
		}
		return mustAffect(res, fault.New(fault.NotFound, "database %s/%s not found", typ, schema))
	})
	if err != nil {
		return Database{}, err
	}
	return s.Database(ctx, projectID, typ, schema)
}
