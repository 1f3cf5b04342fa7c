package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
)

// The direct baseline: what a developer writes by hand to serve the same
// page from the same table. Plain net/http, the driver's own pool, Scan
// into a struct, encoding/json. Nothing tuned: it is the yardstick.
//
//	GET /items     PostgreSQL, a default pgxpool (it caches prepared statements)
//	GET /ma/items  MariaDB, database/sql + go-sql-driver/mysql, one statement
//	               prepared at start; idle pool as large as the gateway's
//	GET /ch/items  ClickHouse, clickhouse-go/v2 native protocol, default pool

const directSQL = `SELECT id, name, price, qty, active, created, note, grp FROM ` + benchSchema + `.` + benchTable + ` ORDER BY id LIMIT $1 OFFSET $2`

type item struct {
	ID      int64        `json:"id"`
	Name    string       `json:"name"`
	Price   *json.Number `json:"price"` // numeric: exact text, written as a JSON number
	Qty     *int32       `json:"qty"`
	Active  *bool        `json:"active"`
	Created *time.Time   `json:"created"`
	Note    *string      `json:"note"`
	Grp     int32        `json:"grp"`
}

// chItem is a ClickHouse row as the driver scans it: Decimal into
// shopspring's decimal (which encoding/json writes as a string), UInt8.
type chItem struct {
	ID      int64            `json:"id"`
	Name    string           `json:"name"`
	Price   *decimal.Decimal `json:"price"`
	Qty     *int32           `json:"qty"`
	Active  *uint8           `json:"active"`
	Created *time.Time       `json:"created"`
	Note    *string          `json:"note"`
	Grp     int32            `json:"grp"`
}

func (it *item) fields() []any {
	return []any{&it.ID, &it.Name, &it.Price, &it.Qty, &it.Active, &it.Created, &it.Note, &it.Grp}
}

func (it *chItem) fields() []any {
	return []any{&it.ID, &it.Name, &it.Price, &it.Qty, &it.Active, &it.Created, &it.Note, &it.Grp}
}

type directPage struct {
	Number int `json:"number"`
	Size   int `json:"size"`
}

type directResponse[T any] struct {
	Data []T        `json:"data"`
	Page directPage `json:"page"`
}

// pageParams reads ps and pg; false when it has answered 400.
func pageParams(w http.ResponseWriter, r *http.Request) (ps, pg int, ok bool) {
	q := r.URL.Query()
	ps, err := strconv.Atoi(q.Get("ps"))
	if err != nil || ps < 1 || ps > 10000 {
		http.Error(w, "bad ps", http.StatusBadRequest)
		return 0, 0, false
	}
	pg, err = strconv.Atoi(q.Get("pg"))
	if err != nil || pg < 0 {
		http.Error(w, "bad pg", http.StatusBadRequest)
		return 0, 0, false
	}
	return ps, pg, true
}

// pageRows is what the three drivers' row sets have in common.
type pageRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scannable is an item whose fields a row scans into, in SELECT order.
type scannable[T any] interface {
	*T
	fields() []any
}

// pageHandler answers GET ?ps=&pg= with one page: query runs the page's
// SELECT (limit, offset) and returns the rows and how to close them.
func pageHandler[T any, PT scannable[T]](query func(ctx context.Context, ps, off int) (pageRows, func(), error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ps, pg, ok := pageParams(w, r)
		if !ok {
			return
		}
		rows, closeRows, err := query(r.Context(), ps, pg*ps)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer closeRows()
		items := make([]T, 0, ps)
		for rows.Next() {
			var it T
			if err := rows.Scan(PT(&it).fields()...); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			items = append(items, it)
		}
		if err := rows.Err(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writePage(w, items, pg, ps)
	}
}

func writePage[T any](w http.ResponseWriter, items []T, pg, ps int) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(directResponse[T]{Data: items, Page: directPage{Number: pg, Size: ps}}); err != nil {
		log.Printf("direct: write: %v", err)
	}
}

// serveDirect runs the baseline on addr until SIGTERM or SIGINT and
// returns the exit status. It prints "listening ADDR" on stdout when ready.
// codes names the dialects to serve besides pg ("ma", "ch"), whose DSNs
// are in the environment.
func serveDirect(addr string, codes []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		log.Printf("direct: %s is not set", envDSN)
		return 1
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		log.Printf("direct: %v", err)
		return 1
	}
	defer pool.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /items", pageHandler[item](func(ctx context.Context, ps, off int) (pageRows, func(), error) {
		rows, err := pool.Query(ctx, directSQL, ps, off)
		if err != nil {
			return nil, nil, err
		}
		return rows, rows.Close, nil
	}))
	strongHandlers(mux, pool)

	if slices.Contains(codes, "ma") {
		db, err := openMA(os.Getenv(envMADSN))
		if err != nil {
			log.Printf("direct: ma: %v", err)
			return 1
		}
		defer db.Close()
		// database/sql keeps 2 idle connections by default, too few for
		// the load: the gateway keeps max(8, GOMAXPROCS); so does this.
		db.SetMaxIdleConns(max(8, runtime.GOMAXPROCS(0)))
		stmt, err := db.PrepareContext(ctx, maSelect)
		if err != nil {
			log.Printf("direct: ma: %v", err)
			return 1
		}
		defer stmt.Close()
		mux.HandleFunc("GET /ma/items", pageHandler[item](func(ctx context.Context, ps, off int) (pageRows, func(), error) {
			rows, err := stmt.QueryContext(ctx, ps, off)
			if err != nil {
				return nil, nil, err
			}
			return rows, func() { rows.Close() }, nil
		}))
	}

	if slices.Contains(codes, "ch") {
		conn, err := openCH(os.Getenv(envCHDSN))
		if err != nil {
			log.Printf("direct: ch: %v", err)
			return 1
		}
		defer conn.Close()
		mux.HandleFunc("GET /ch/items", pageHandler[chItem](func(ctx context.Context, ps, off int) (pageRows, func(), error) {
			rows, err := conn.Query(ctx, chSelect, ps, off)
			if err != nil {
				return nil, nil, err
			}
			return rows, func() { rows.Close() }, nil
		}))
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Printf("direct: %v", err)
		return 1
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Printf("listening %s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		log.Printf("direct: %v", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("direct: shutdown: %v", err)
	}
	return 0
}
