package api_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/littlebitlabs/minimal/dialects/dialecttest"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// BenchmarkReadByKey is the gateway's 1-row REST GET by primary key
// (bench -only pk) in process: the handler the server mounts, an audit
// writer behind the engine, and a PostgreSQL table like the bench's. Its
// allocs/op and B/op are the read road's per request, the HTTP server's
// own aside.
func BenchmarkReadByKey(b *testing.B) {
	dsn := dialecttest.DSN(b, "MINIMAL_TEST_PG_DSN")
	ctx := context.Background()
	g := openGateway(b, engine.Config{AcquireTimeout: 5 * time.Second}, true)
	h := g.srv.Config.Handler // called directly: no listener in the way
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
		h.ServeHTTP(w, req)
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
