package sessions

import (
	"context"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// List describes the AI sessions of a project, newest first, at most limit
// of them, as Journal describes one.
func List(ctx context.Context, st *store.Store, projectID string, limit int) ([]SessionView, error) {
	ss, err := st.Sessions(ctx, projectID, limit)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]SessionView, len(ss))
	for i, s := range ss {
		out[i] = describe(s, now)
	}
	return out, nil
}
