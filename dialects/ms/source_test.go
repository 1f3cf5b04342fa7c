package ms

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// These tests need no SQL Server: they cover what a Source does before and
// around the server (DSN, schema binding, closing, unreachable and silent
// servers, the statement timeout). ms_test.go runs against a real one.

func wantKind(t *testing.T, err error, kind fault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if got := fault.KindOf(err); got != kind {
		t.Fatalf("kind %s, want %s: %v", got, kind, err)
	}
}

func open(t *testing.T, cfg dialects.Config) dialects.Source {
	t.Helper()
	src, err := dialects.Open(context.Background(), "ms", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// readAll runs a read to its end and returns its first error.
func readAll(ctx context.Context, src dialects.Source, p *query.Plan) error {
	rows, err := src.Read(ctx, p)
	if err != nil {
		return err
	}
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			_ = rows.Close()
			return err
		}
	}
	return rows.Close()
}

func TestOpen(t *testing.T) {
	if !slices.Contains(dialects.Types(), "ms") {
		t.Fatal(`"ms" is not registered`)
	}
	// Opening does not connect: nothing listens on port 1.
	src := open(t, dialects.Config{DSN: "sqlserver://u:secret@127.0.0.1:1?database=db&dial+timeout=2", MaxConns: 3})
	if src.Dialect().Name() != "ms" {
		t.Fatalf("dialect %q", src.Dialect().Name())
	}
	if s := src.(*Source); s.schema != "dbo" || s.guidConv {
		t.Fatalf("schema %q, guid conversion %v", s.schema, s.guidConv)
	}
	g := open(t, dialects.Config{DSN: "sqlserver://u:p@127.0.0.1:1?guid+conversion=true", Schema: "sales"})
	if s := g.(*Source); s.schema != "sales" || !s.guidConv {
		t.Fatalf("schema %q, guid conversion %v", s.schema, s.guidConv)
	}
	for _, dsn := range []string{
		"sqlserver://u:secret@host:notaport/db\x7f",
		"server=h;password=secret;port=abc",
		"sqlserver://u:secret@host?guid+conversion=maybe",
	} {
		_, err := Open(context.Background(), dialects.Config{DSN: dsn})
		wantKind(t, err, fault.Invalid)
		if strings.Contains(fault.As(err).Message, "secret") {
			t.Errorf("message shows the password: %q", fault.As(err).Message)
		}
	}
}

func TestPlanBinding(t *testing.T) {
	src := open(t, dialects.Config{DSN: "sqlserver://u:p@127.0.0.1:1", Schema: "app"})
	ctx := context.Background()
	wantKind(t, readAll(ctx, src, &query.Plan{Action: query.Read, Schema: "other", Table: "t", Columns: []string{"a"}}), fault.NotFound)
	_, err := src.Read(ctx, nil)
	wantKind(t, err, fault.Invalid)
	_, err = src.Read(ctx, &query.Plan{Action: query.Delete, Table: "t", All: true})
	wantKind(t, err, fault.Invalid)
	_, err = src.Write(ctx, &query.Plan{Action: query.Read, Table: "t"})
	wantKind(t, err, fault.Invalid)
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Schema: "other", Table: "t", All: true})
	wantKind(t, err, fault.NotFound)
	// A plan the dialect refuses never reaches the (absent) server.
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Table: "t"})
	wantKind(t, err, fault.Invalid)
	wantKind(t, readAll(ctx, src, &query.Plan{Action: query.Read, Table: "t", Columns: []string{""}}), fault.Invalid)
}

func TestUnreachable(t *testing.T) {
	src := open(t, dialects.Config{DSN: "sqlserver://u:p@127.0.0.1:1?database=db&dial+timeout=2"})
	ctx := context.Background()
	wantKind(t, src.Ping(ctx), fault.Unavailable)
	_, err := src.Tables(ctx)
	wantKind(t, err, fault.Unavailable)
	wantKind(t, readAll(ctx, src, &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}}), fault.Unavailable)
	_, err = src.Write(ctx, &query.Plan{Action: query.Insert, Table: "t", Columns: []string{"a"}, Rows: [][]any{{int64(1)}}})
	wantKind(t, err, fault.Unavailable)
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Table: "t", All: true})
	wantKind(t, err, fault.Unavailable)
}

func TestClosed(t *testing.T) {
	src := open(t, dialects.Config{DSN: "sqlserver://u:p@127.0.0.1:1"})
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	wantKind(t, src.Ping(ctx), fault.Unavailable)
	wantKind(t, readAll(ctx, src, &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}}), fault.Unavailable)
	_, err := src.Tables(ctx)
	wantKind(t, err, fault.Unavailable)
	_, err = src.Write(ctx, &query.Plan{Action: query.Delete, Table: "t", All: true})
	wantKind(t, err, fault.Unavailable)
}

// silentServer accepts connections and never answers, like a server that
// hangs; it is closed when the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// The statement timeout is a context deadline: it bounds a call even where
// the server says nothing at all.
func TestStatementTimeout(t *testing.T) {
	addr := silentServer(t)
	src := open(t, dialects.Config{DSN: "sqlserver://u:p@" + addr + "?database=db", StatementTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	start := time.Now()
	wantKind(t, readAll(ctx, src, &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}}), fault.Timeout)
	_, err := src.Write(ctx, &query.Plan{Action: query.Delete, Table: "t", All: true})
	wantKind(t, err, fault.Timeout)
	_, err = src.Tables(ctx)
	wantKind(t, err, fault.Timeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("three calls took %v", d)
	}
	// Without a statement timeout the caller's deadline does the same.
	plain := open(t, dialects.Config{DSN: "sqlserver://u:p@" + addr + "?database=db"})
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	wantKind(t, plain.Ping(cctx), fault.Timeout)
}
