package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	_ "github.com/littlebitlabs/minimal/dialects/ch"
	_ "github.com/littlebitlabs/minimal/dialects/ma"
	"github.com/littlebitlabs/minimal/engine"
)

// TestCrossDialect sends the same REST requests to equivalent tables in
// PostgreSQL, MariaDB and ClickHouse and asserts the same JSON comes back.
// The one documented difference normalized here: ClickHouse 18.x has no
// Bool type, so `active` is a UInt8 answered as 0/1.
func TestCrossDialect(t *testing.T) {
	g := newGateway(t, engine.Config{})
	name := g.dialectDBs("xd", map[string][]string{
		"pg": {`CREATE TABLE {db}.xd_items (
		id bigint PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2) NOT NULL, day date NOT NULL, active boolean NOT NULL)`},
		// The test user may create minimal_* databases.
		"ma": {`CREATE TABLE {db}.xd_items (
		id bigint PRIMARY KEY, name varchar(40) COLLATE utf8mb4_bin NOT NULL, qty int NULL, price decimal(10,2) NOT NULL, day date NOT NULL, active boolean NOT NULL)`},
		"ch": {`CREATE TABLE {db}.xd_items (
		id Int64, name String, qty Nullable(Int32), price Decimal(10,2), day Date, active UInt8) ENGINE = MergeTree ORDER BY id`},
	})
	types := []string{"pg", "ma", "ch"}
	for _, typ := range types {
		g.waitFor("/" + typ + "/" + name + "/xd_items?ps=1&pg=0")
	}
	path := func(typ string) string { return auto + "/" + typ + "/" + name + "/xd_items" }

	rows := []any{
		map[string]any{"id": 1, "name": "Ann", "qty": 3, "price": "1.50", "day": "2024-01-15", "active": true},
		map[string]any{"id": 2, "name": "ann", "qty": 5, "price": "20.00", "day": "2024-02-29", "active": false},
		map[string]any{"id": 3, "name": "Bob, Jr.", "qty": nil, "price": "5.50", "day": "2024-03-01", "active": true},
		map[string]any{"id": 4, "name": "Alma", "qty": 1, "price": "99999999.99", "day": "1999-12-31", "active": false},
		map[string]any{"id": 5, "name": "Zoë", "qty": 2, "price": "0.01", "day": "2024-06-30", "active": true},
		map[string]any{"id": 6, "name": "100%_sure", "qty": 7, "price": "3.25", "day": "2024-12-31", "active": false},
	}
	for _, typ := range types {
		body := rows
		if typ == "ch" { // no Bool on ClickHouse 18.x: UInt8 takes 1/0
			body = make([]any, len(rows))
			for i, row := range rows {
				m := map[string]any{}
				for k, v := range row.(map[string]any) {
					m[k] = v
				}
				m["active"] = map[bool]int{true: 1, false: 0}[m["active"].(bool)]
				body[i] = m
			}
		}
		r := g.do("POST", path(typ), g.admin, body)
		expect(t, r, 201)
		if fmt.Sprint(r.json(t)["rows_affected"]) != "6" {
			t.Fatalf("%s insert: %s", typ, r.body)
		}
	}

	normalize := func(typ string, body []byte) any {
		var v map[string]any
		d := json.NewDecoder(bytesReader(body))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v: %s", typ, err, body)
		}
		data, _ := v["data"].([]any)
		for _, row := range data {
			m := row.(map[string]any)
			if a, ok := m["active"].(json.Number); ok && typ == "ch" {
				m["active"] = a == "1"
			}
		}
		return v
	}
	queries := []string{
		"ps=10&pg=0&oy=id.as",
		"ps=2&pg=1&oy=price.ds,id.as",
		"ps=10&pg=0&oy=id.as&fc=id,name",
		"ps=10&pg=0&oy=id.as&name=like.A*",
		"ps=10&pg=0&oy=id.as&name=ilike.*an*",
		"ps=10&pg=0&oy=id.as&name=eq.Ann",
		"ps=10&pg=0&oy=id.as&name=like.100%25_*",
		"ps=10&pg=0&oy=id.as&qty=is.null",
		"ps=10&pg=0&oy=id.as&qty=is.notnull&qty=gt.2",
		"ps=10&pg=0&oy=id.as&qty=not.eq.3",
		"ps=10&pg=0&oy=id.as&price=bw.1,5.5",
		"ps=10&pg=0&oy=id.as&price=gt.20",
		"ps=10&pg=0&oy=id.as&id=in.1,3,5",
		"ps=10&pg=0&oy=id.as&id=nin.1,2",
		"ps=10&pg=0&oy=id.as&day=lt.2024-03-01&day=ge.2024-01-01",
		"ps=10&pg=0&oy=id.as&name=in.%22Bob,%20Jr.%22,Zo%C3%AB",
		"ps=10&pg=5&oy=id.as",
		"ps=10&pg=0&oy=id.as&format=csv&fc=id,name,qty,price,day",
	}
	check := func(q string) {
		t.Helper()
		var want any
		var wantRaw string
		for _, typ := range types {
			r := g.do("GET", path(typ)+"?"+q, g.admin, nil)
			if r.status != 200 {
				t.Errorf("%s %s: %d %s", typ, q, r.status, r.body)
				return
			}
			var got any
			if r.header.Get("Content-Type") == "application/json" {
				got = normalize(typ, r.body)
			} else {
				got = string(r.body)
			}
			if typ == "pg" {
				want, wantRaw = got, string(r.body)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s differs from pg for %s:\n%s: %s\npg: %s", typ, q, typ, r.body, wantRaw)
			}
		}
	}
	for _, q := range queries {
		check(q)
	}
	// Writes answer the same and leave the same rows.
	for _, w := range []struct {
		method, q string
		body      any
	}{
		{"PUT", "?id=in.2,4", map[string]any{"qty": 9, "price": "2.00"}},
		{"PUT", "?qty=is.null", map[string]any{"name": "Bob"}},
		{"DELETE", "?name=like.100*", nil},
		{"DELETE", "?id=eq.42", nil},
	} {
		var want string
		for _, typ := range types {
			r := g.do(w.method, path(typ)+w.q, g.admin, w.body)
			expect(t, r, 200)
			got := fmt.Sprint(r.json(t)["rows_affected"])
			if typ == "pg" {
				want = got
			} else if got != want {
				t.Errorf("%s %s%s: rows_affected %s, pg %s", typ, w.method, w.q, got, want)
			}
		}
	}
	check("ps=10&pg=0&oy=id.as")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
