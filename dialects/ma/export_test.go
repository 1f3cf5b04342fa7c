package ma

import (
	"context"

	"github.com/littlebitlabs/minimal/dialects"
)

// ForceMySQLInserts makes src insert as it does on MySQL (no RETURNING; rows
// read back by key from LAST_INSERT_ID), so the path runs on MariaDB too.
func ForceMySQLInserts(ctx context.Context, src dialects.Source) error {
	s := src.(*Source)
	info, err := s.serverInfo(ctx)
	if err != nil {
		return err
	}
	cp := *info
	cp.returning = false
	s.server.Store(&cp)
	return nil
}

// ServerIsMariaDB reports the flavor src found, and whether it returns rows
// from INSERT.
func ServerIsMariaDB(ctx context.Context, src dialects.Source) (mariaDB, returning bool, version string, err error) {
	info, err := src.(*Source).serverInfo(ctx)
	if err != nil {
		return false, false, "", err
	}
	return info.mariaDB, info.returning, info.version, nil
}
