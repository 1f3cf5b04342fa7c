package mi

import (
	"context"

	"github.com/littlebitlabs/minimal/fault"
)

// CreateFiles creates, for every table of the directory dsn (TableNames),
// its <table>.db with mini-app-mcp's tables (rows, _aliases, _row_history,
// _row_history_archive) where they are missing, as mini-app-mcp does when
// it mounts a directory: a table whose directory holds only schema.yaml
// can then be queried at once (schema_batch's query op). Existing files
// and rows are left as they are.
func CreateFiles(ctx context.Context, dsn string) error {
	names, err := TableNames(dsn)
	if err != nil {
		return err
	}
	for _, n := range names {
		db, err := openTableDB(ctx, DBPath(dsn, n), 1)
		if err != nil {
			return fault.Wrap(fault.Unavailable, err, "mi: cannot create the file of table %q", n)
		}
		if err := db.Close(); err != nil {
			return fault.Wrap(fault.Unavailable, err, "mi: cannot close the file of table %q", n)
		}
	}
	return nil
}
