package main

import (
	"context"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The strong baseline: what an expert writes by hand to serve the page
// fastest, so that "direct" is a real limit and not a naive handler. The
// same SELECT on the same default pgxpool as /items, but each column
// scanned into its own typed variable and every row appended to one
// buffer as JSON by hand — no reflection, no encoding/json, one write:
//
//	GET /strong/items?ps=&pg=   a page, as /items answers it
//	GET /strong/item?id=        one row by primary key, as a page of one

const strongKeySQL = `SELECT id, name, price, qty, active, created, note, grp FROM ` + benchSchema + `.` + benchTable + ` WHERE id = $1`

// strongRow is one row as the strong baseline scans it.
type strongRow struct {
	id      int64
	name    string
	price   pgtype.Numeric
	qty     pgtype.Int4
	active  pgtype.Bool
	created pgtype.Timestamptz
	note    pgtype.Text
	grp     int32
}

// strongHandlers adds the strong baseline's routes to mux.
func strongHandlers(mux *http.ServeMux, pool *pgxpool.Pool) {
	mux.HandleFunc("GET /strong/items", func(w http.ResponseWriter, r *http.Request) {
		ps, pg, ok := pageParams(w, r)
		if !ok {
			return
		}
		strongAnswer(w, r.Context(), pool, directSQL, pg, ps, ps, pg*ps)
	})
	mux.HandleFunc("GET /strong/item", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		strongAnswer(w, r.Context(), pool, strongKeySQL, 0, 1, id)
	})
}

// strongAnswer runs sql with args and answers {"data":[…],"page":{…}}.
func strongAnswer(w http.ResponseWriter, ctx context.Context, pool *pgxpool.Pool, sql string, pg, ps int, args ...any) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	b := make([]byte, 0, 256*ps+64)
	b = append(b, `{"data":[`...)
	var row strongRow
	n := 0
	for rows.Next() {
		if err := rows.Scan(&row.id, &row.name, &row.price, &row.qty, &row.active, &row.created, &row.note, &row.grp); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = row.appendJSON(b)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, `],"page":{"number":`...)
	b = strconv.AppendInt(b, int64(pg), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(ps), 10)
	b = append(b, "}}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// appendJSON appends the row as a JSON object.
func (r *strongRow) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, r.name)
	b = append(b, `,"price":`...)
	if r.price.Valid {
		if num, err := r.price.MarshalJSON(); err == nil {
			b = append(b, num...)
		} else {
			b = append(b, "null"...)
		}
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"qty":`...)
	if r.qty.Valid {
		b = strconv.AppendInt(b, int64(r.qty.Int32), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"active":`...)
	switch {
	case !r.active.Valid:
		b = append(b, "null"...)
	case r.active.Bool:
		b = append(b, "true"...)
	default:
		b = append(b, "false"...)
	}
	b = append(b, `,"created":`...)
	if r.created.Valid {
		b = append(b, '"')
		b = r.created.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"note":`...)
	if r.note.Valid {
		b = appendJSONString(b, r.note.String)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"grp":`...)
	b = strconv.AppendInt(b, int64(r.grp), 10)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD, the rest as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
