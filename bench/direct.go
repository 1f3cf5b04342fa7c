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
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The direct baseline: what a developer writes by hand to serve the same
// page from the same table. Plain net/http, a default pgxpool, Scan into a
// struct, encoding/json. Nothing tuned: it is the yardstick.

const directSQL = `SELECT id, name, price, qty, active, created, note FROM ` + benchSchema + `.` + benchTable + ` ORDER BY id LIMIT $1 OFFSET $2`

type item struct {
	ID      int64        `json:"id"`
	Name    string       `json:"name"`
	Price   *json.Number `json:"price"` // numeric: exact text, written as a JSON number
	Qty     *int32       `json:"qty"`
	Active  *bool        `json:"active"`
	Created *time.Time   `json:"created"`
	Note    *string      `json:"note"`
}

type directPage struct {
	Number int `json:"number"`
	Size   int `json:"size"`
}

type directResponse struct {
	Data []item     `json:"data"`
	Page directPage `json:"page"`
}

// serveDirect runs the baseline on addr until SIGTERM or SIGINT and
// returns the exit status. It prints "listening ADDR" on stdout when ready.
func serveDirect(addr string) int {
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
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ps, err := strconv.Atoi(q.Get("ps"))
		if err != nil || ps < 1 || ps > 10000 {
			http.Error(w, "bad ps", http.StatusBadRequest)
			return
		}
		pg, err := strconv.Atoi(q.Get("pg"))
		if err != nil || pg < 0 {
			http.Error(w, "bad pg", http.StatusBadRequest)
			return
		}
		rows, err := pool.Query(r.Context(), directSQL, ps, pg*ps)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer rows.Close()
		items := make([]item, 0, ps)
		for rows.Next() {
			var it item
			if err := rows.Scan(&it.ID, &it.Name, &it.Price, &it.Qty, &it.Active, &it.Created, &it.Note); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			items = append(items, it)
		}
		if err := rows.Err(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(directResponse{Data: items, Page: directPage{Number: pg, Size: ps}}); err != nil {
			log.Printf("direct: write: %v", err)
		}
	})

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
