package mcp_test

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"gopkg.in/yaml.v3"

	"github.com/littlebitlabs/minimal/dialects/mi"
)

// TestMiniAppListRESTParity: the same mi table answers the list tool and
// the Auto API with the same rows — filters on schema fields, projection,
// order and paging expressed each face's way — in every REST format.
func TestMiniAppListRESTParity(t *testing.T) {
	g := newGateway(t, time.Hour)
	dir := filepath.Join(g.dir, "mini-app", "app")
	yml := "table: tasks\nfields:\n  - name: title\n    type: string\n    required: true\n  - name: status\n    type: string\n  - name: qty\n    type: number\n  - name: done\n    type: boolean\n"
	if err := mi.CreateTable(dir, "tasks", []byte(yml)); err != nil {
		t.Fatal(err)
	}
	sid := g.start(g.agent)
	for i, r := range []map[string]any{
		{"title": "alpha", "status": "open", "qty": 1, "done": false},
		{"title": "banana", "status": "open", "qty": 3, "done": true},
		{"title": "cherry", "status": "closed", "qty": 2, "done": true},
		{"title": "damson", "status": "open", "qty": 2.5, "done": false},
		{"title": "elder, \"quoted\" <tag>", "status": "closed", "qty": 3, "done": false},
		{"title": "fig", "qty": 1},
	} {
		if text, isErr := g.miniTool(sid, "create", map[string]any{"table": "tasks", "data": r}); isErr {
			t.Fatalf("create %d: %s", i, text)
		}
	}
	base := "/minimal/api/rest/auto/v1/demo/demo/mi/app/tasks?"
	cases := []struct {
		name  string
		list  map[string]any
		query string
	}{
		{"eq, order, first page",
			map[string]any{"filter": map[string]any{"type": "eq", "field": "status", "value": "open"}, "order_by": []any{map[string]any{"field": "title"}}, "limit": 2, "offset": 0},
			"status=eq.open&oy=title.as&ps=2&pg=0"},
		{"eq, order, second page",
			map[string]any{"filter": map[string]any{"type": "eq", "field": "status", "value": "open"}, "order_by": []any{map[string]any{"field": "title"}}, "limit": 2, "offset": 2},
			"status=eq.open&oy=title.as&ps=2&pg=1"},
		{"past the end",
			map[string]any{"order_by": []any{map[string]any{"field": "title"}}, "limit": 4, "offset": 8},
			"oy=title.as&ps=4&pg=2"},
		{"in on a number, two orders",
			map[string]any{"filter": map[string]any{"type": "in", "field": "qty", "values": []any{2, 3}}, "order_by": []any{map[string]any{"field": "qty", "direction": "desc"}, map[string]any{"field": "title"}}, "limit": 10},
			"qty=in.2,3&oy=qty.ds,title.as&ps=10&pg=0"},
		{"like, projection",
			map[string]any{"filter": map[string]any{"type": "like", "field": "title", "pattern": "%an%"}, "fields": map[string]any{"mode": "list", "fields": []any{"title", "qty"}}, "order_by": []any{map[string]any{"field": "title"}}, "limit": 10},
			"title=like.*an*&fc=id,created_at,updated_at,title,qty&oy=title.as&ps=10&pg=0"},
		{"and of eq and boolean",
			map[string]any{"filter": map[string]any{"type": "and", "filters": []any{
				map[string]any{"type": "eq", "field": "done", "value": true}, map[string]any{"type": "eq", "field": "status", "value": "open"}}}, "limit": 10},
			"done=is.true&status=eq.open&ps=10&pg=0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"table": "tasks"}
			for k, v := range c.list {
				args[k] = v
			}
			text, isErr := g.miniTool(sid, "list", args)
			if isErr {
				t.Fatalf("list: %s", text)
			}
			var listed []struct {
				ID        string         `json:"id"`
				Data      map[string]any `json:"data"`
				CreatedAt int64          `json:"created_at"`
				UpdatedAt int64          `json:"updated_at"`
			}
			d := json.NewDecoder(strings.NewReader(text))
			d.UseNumber()
			if err := d.Decode(&listed); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range listed {
				ids = append(ids, r.ID)
			}
			if len(ids) == 0 && !strings.Contains(c.name, "past the end") {
				t.Fatal("the case selects no rows")
			}

			// JSON: the same rows, value for value.
			r := g.restDo("GET", base+c.query, g.admin, nil)
			if r.status != 200 {
				t.Fatalf("REST: %d %s", r.status, r.raw)
			}
			var doc struct {
				Data []map[string]any `json:"data"`
			}
			d = json.NewDecoder(bytes.NewReader(r.raw))
			d.UseNumber()
			if err := d.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Data) != len(listed) {
				t.Fatalf("REST %d rows, list %d", len(doc.Data), len(listed))
			}
			for i, row := range doc.Data {
				l := listed[i]
				want := map[string]any{"id": l.ID, "created_at": json.Number(fmt.Sprint(l.CreatedAt)), "updated_at": json.Number(fmt.Sprint(l.UpdatedAt))}
				for k, v := range l.Data {
					want[k] = v
				}
				for k, v := range row {
					if v == nil {
						delete(row, k) // REST shows an absent field as null; list leaves it out
					}
				}
				if !reflect.DeepEqual(row, want) {
					t.Errorf("row %d: REST %v, list %v", i, row, want)
				}
			}
			// Every other format: the same ids in the same order.
			for _, f := range []string{"ndjson", "csv", "xml", "yaml", "bson"} {
				r := g.restDo("GET", base+c.query+"&format="+f, g.admin, nil)
				if r.status != 200 {
					t.Fatalf("%s: %d %s", f, r.status, r.raw)
				}
				if got := idsOf(t, f, r.raw); !reflect.DeepEqual(got, ids) && !(len(got) == 0 && len(ids) == 0) {
					t.Errorf("%s ids %v, list %v", f, got, ids)
				}
			}
		})
	}
}

// idsOf reads the id column of an Auto API answer in format f.
func idsOf(t *testing.T, f string, b []byte) []string {
	t.Helper()
	var ids []string
	switch f {
	case "ndjson":
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var row struct{ ID string }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("ndjson line %q: %v", line, err)
			}
			ids = append(ids, row.ID)
		}
	case "csv":
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(recs) == 0 || recs[0][0] != "id" {
			t.Fatalf("csv %q: %v", b, err)
		}
		for _, rec := range recs[1:] {
			ids = append(ids, rec[0])
		}
	case "xml":
		var doc struct {
			Rows []struct {
				ID string `xml:"id"`
			} `xml:"data>row"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("xml %q: %v", b, err)
		}
		for _, r := range doc.Rows {
			ids = append(ids, r.ID)
		}
	case "yaml":
		var doc struct {
			Data []struct {
				ID string `yaml:"id"`
			} `yaml:"data"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("yaml %q: %v", b, err)
		}
		for _, r := range doc.Data {
			ids = append(ids, r.ID)
		}
	case "bson":
		for len(b) > 0 {
			if len(b) < 4 {
				t.Fatalf("bson tail %x", b)
			}
			n := int(binary.LittleEndian.Uint32(b))
			doc := bson.Raw(b[:n])
			if err := doc.Validate(); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, doc.Lookup("id").StringValue())
			b = b[n:]
		}
	}
	return ids
}
