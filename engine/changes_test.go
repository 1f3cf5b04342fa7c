package engine

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// Run syncs the catalog when the store announces a write, long before its
// next poll (an hour here).
func TestRunWakesOnStoreWrites(t *testing.T) {
	t.Setenv(store.EnvControlDSN, "")
	t.Setenv(store.EnvMasterKey, "")
	ctx := t.Context()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.CreateOrg(ctx, "O", "o")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := st.CreateProject(ctx, org.ID, "P", "p")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ctx, st, Config{PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go e.Run(rctx)

	if _, err := st.AddDatabase(ctx, store.Database{ProjectID: proj.ID, Type: "mi", Schema: "app", DSN: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.cat.get(proj.ID, "mi", "app") == nil {
		if time.Now().After(deadline) {
			t.Fatal("a database added to the store is not in the catalog: Run did not wake")
		}
		// Run subscribes in its own goroutine; a later write wakes it too.
		if err := st.PutSetting(ctx, "poke", time.Now().String()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
