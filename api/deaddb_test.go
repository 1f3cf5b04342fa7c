package api_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/store"
)

// TestDeadDatabaseIsolated registers a PostgreSQL database at an address
// that accepts connections and never answers (a blackhole), then sends a
// burst of requests to it while reading a healthy table: the healthy read
// answers at once, and every request to the dead database answers within
// one connect timeout — they share one dial instead of queueing behind each
// other's.
func TestDeadDatabaseIsolated(t *testing.T) {
	const connectTimeout = time.Second
	g := newGateway(t, engine.Config{ConnectTimeout: connectTimeout})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		dials int
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns, dials = append(conns, c), dials+1
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	dsn := "postgres://nobody@" + ln.Addr().String() + "/dead?sslmode=disable&connect_timeout=30"
	if _, err := g.st.AddDatabase(context.Background(), store.Database{ProjectID: g.proj.ID, Type: "pg", Schema: "public", DSN: dsn}); err != nil {
		t.Fatal(err)
	}
	// Wait until the catalog has the registration (the dead table answers
	// something other than the 404 of an unknown database).
	deadline := time.Now().Add(5 * time.Second)
	for g.do("GET", auto+"/pg/public/t?ps=1&pg=0", g.admin, nil).status == 404 {
		if time.Now().After(deadline) {
			t.Fatal("registration not picked up")
		}
		time.Sleep(20 * time.Millisecond)
	}

	const burst = 6
	start := time.Now()
	var wg sync.WaitGroup
	took := make([]time.Duration, burst)
	status := make([]int, burst)
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			status[i] = g.do("GET", auto+"/pg/public/t?ps=1&pg=0", g.admin, nil).status
			took[i] = time.Since(t0)
		}()
	}
	time.Sleep(100 * time.Millisecond) // the burst is waiting on the dead database
	t0 := time.Now()
	expect(t, g.do("GET", auto+"/mi/app/notes?ps=10&pg=0", g.admin, nil), 200)
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Fatalf("a healthy table took %s while another database was dead", d)
	}
	wg.Wait()
	for i := range burst {
		if status[i] != 504 && status[i] != 503 {
			t.Fatalf("request %d to the dead database: status %d", i, status[i])
		}
		if took[i] > connectTimeout+time.Second {
			t.Fatalf("request %d to the dead database took %s (connect timeout %s): requests queued", i, took[i], connectTimeout)
		}
	}
	if total := time.Since(start); total > connectTimeout+1500*time.Millisecond {
		t.Fatalf("the burst took %s", total)
	}
	mu.Lock()
	n := dials
	mu.Unlock()
	if n > 2 {
		t.Fatalf("%d dials for one burst: concurrent loads were not shared", n)
	}
}
