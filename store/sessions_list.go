package store

import "context"

// Sessions lists the AI sessions of a project, newest first, at most limit
// of them.
func (s *Store) Sessions(ctx context.Context, projectID string, limit int) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+sessionFrom+` WHERE s.project_id = ? ORDER BY s.started_at DESC, s.id DESC LIMIT ?`, projectID, limit)
	if err != nil {
		return nil, dbErr(err, "store: list sessions")
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, dbErr(err, "store: list sessions")
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "store: list sessions")
	}
	return out, nil
}
