package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/api"
	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/bootstrap"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// BenchmarkReadByKey is the gateway's 1-row REST GET by primary key
// (bench -only pk) in process: the handler the server mounts, an audit
// writer behind the engine, and a PostgreSQL table like the bench's. Its
// allocs/op and B/op are the read road's per request, the HTTP server's
// own aside.
func BenchmarkReadByKey(b *testing.B) {
	dsn := pgDSNB(b)
	ctx := context.Background()
	g := newGatewayB(b)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	schema := fmt.Sprintf("apibench_%d", rand.Uint32())
	b.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.Background())
	})
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`;
CREATE TABLE `+schema+`.items (id bigint PRIMARY KEY, name text NOT NULL, price numeric(12,2), qty int, active boolean, created timestamptz, note text, grp int NOT NULL);
INSERT INTO `+schema+`.items SELECT g, 'item ' || g, g * 1.25, g % 100, g % 2 = 0, now(), NULL, g % 10 FROM generate_series(1, 1000) g`); err != nil {
		b.Fatal(err)
	}
	if _, err := g.st.AddDatabase(ctx, store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: schema, DSN: dsn}); err != nil {
		b.Fatal(err)
	}
	path := auto + "/pg/" + schema + "/items?ps=1&pg=0&id=eq.7"
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("LB-Access-Token", g.admin)
		w := httptest.NewRecorder()
		g.h.ServeHTTP(w, req)
		return w
	}
	// The registration reaches the engine within its poll interval.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		w := get()
		if w.Code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if w := get(); w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// benchGateway is the part of gateway a benchmark uses: the handler itself,
// served without a listener.
type benchGateway struct {
	st    *store.Store
	h     http.Handler
	admin string
	proj  store.Project
}

func pgDSNB(b *testing.B) string {
	dsn := os.Getenv("MINIMAL_TEST_PG_DSN")
	if dsn == "" {
		b.Skip("MINIMAL_TEST_PG_DSN is unset")
	}
	return dsn
}

// newGatewayB is newGateway for a benchmark, with an audit writer as the
// server has, and its handler called directly.
func newGatewayB(b *testing.B) *benchGateway {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	key, err := auth.SigningKey(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ver := auth.NewVerifier(st, key)
	if _, err := bootstrap.Ensure(ctx, st, dir, key, ver, log); err != nil {
		b.Fatal(err)
	}
	aw := store.NewAuditWriter(st, 0, log)
	eng, err := engine.New(ctx, st, engine.Config{Logger: log, PollInterval: 50 * time.Millisecond, AcquireTimeout: 5 * time.Second, Audit: aw})
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	go eng.Run(rctx)
	h := api.New(api.Deps{Engine: eng, Verifier: ver, Store: st, SigningKey: key}, api.Config{Logger: log})
	b.Cleanup(func() { cancel(); eng.Close(); _ = aw.Close(context.Background()); st.Close() })
	tok, err := os.ReadFile(dir + "/admin.token")
	if err != nil {
		b.Fatal(err)
	}
	org, _ := st.Org(ctx, "demo")
	proj, _ := st.Project(ctx, org.ID, "demo")
	return &benchGateway{st: st, h: h, admin: strings.TrimSpace(string(tok)), proj: proj}
}
