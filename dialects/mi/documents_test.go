package mi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// storedData reads a row's data as the table's file holds it.
func storedData(t *testing.T, dir, id string) string {
	t.Helper()
	var data string
	if err := rawDB(t, DBPath(dir, "items")).QueryRow(`SELECT data FROM rows WHERE id = ?`, id).Scan(&data); err != nil {
		t.Fatal(err)
	}
	return data
}

// docOf reads a row's document with a Doc read (keys: DocKeys).
func docOf(t *testing.T, s *Source, id string, keys []string) string {
	t.Helper()
	cols, rows := readAll(t, s, query.Plan{Columns: []string{"id", "title"}, Where: cond("id", query.Eq, id), Doc: true, DocKeys: keys})
	if len(cols) != 3 || cols[2].Name != query.DocColumn || len(rows) != 1 {
		t.Fatalf("doc read: %v %v", cols, rows)
	}
	raw, ok := rows[0][2].(json.RawMessage)
	if !ok {
		t.Fatalf("doc cell %T", rows[0][2])
	}
	return string(raw)
}

// TestDocumentsStoredAsGiven shows, in the SQLite file itself, that a
// document plan keeps what a column plan cannot: keys the schema does not
// name, explicit nulls, 5.0 apart from 5 and integers past 2^53.
func TestDocumentsStoredAsGiven(t *testing.T) {
	s, dir := openItems(t)
	if !s.Documents() {
		t.Fatal("mi is a DocumentStore")
	}
	const given = `{"title":"a", "qty":5.0, "x":{"b":null,"a":1}, "big":12345678901234567890, "nick":null, "n":5}`
	const stored = `{"big":12345678901234567890,"n":5,"nick":null,"qty":5.0,"title":"a","x":{"a":1,"b":null}}`
	res := write(t, s, query.Plan{Action: query.Insert, Docs: []json.RawMessage{json.RawMessage(given)}})
	id := res.Returned[0][0].(string)
	if got := storedData(t, dir, id); got != stored {
		t.Fatalf("stored\n got %s\nwant %s", got, stored)
	}
	var hist string
	if err := rawDB(t, DBPath(dir, "items")).QueryRow(`SELECT data_json FROM _row_history WHERE row_id = ?`, id).Scan(&hist); err != nil || hist != stored {
		t.Fatalf("history %q %v", hist, err)
	}
	if got := docOf(t, s, id, nil); got != stored {
		t.Fatalf("Doc read\n got %s\nwant %s", got, stored)
	}
	if got := docOf(t, s, id, []string{"qty", "title"}); got != `{"qty":5.0,"title":"a"}` {
		t.Fatalf("Doc read with DocKeys: %s", got)
	}

	update := func(doc string, replace bool, keys []string) error {
		p := query.Plan{Action: query.Update, Table: "items", Where: cond("id", query.Eq, id),
			Docs: []json.RawMessage{json.RawMessage(doc)}, DocReplace: replace, DocKeys: keys}
		_, err := s.Write(context.Background(), &p)
		return err
	}
	// Merge: null removes a key (a known or an unknown one), others are set.
	if err := update(`{"qty":6.50,"x":null,"new":[1.0,null]}`, false, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := storedData(t, dir, id), `{"big":12345678901234567890,"n":5,"new":[1.0,null],"nick":null,"qty":6.5,"title":"a"}`; got != want {
		t.Fatalf("merge\n got %s\nwant %s", got, want)
	}
	if err := update(`{"title":null}`, false, nil); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("merge removing a required field: %v", err)
	}
	// Replace by a caller reaching title and qty only: the rest stays.
	if err := update(`{"title":"b"}`, true, []string{"created_at", "id", "qty", "title", "updated_at"}); err != nil {
		t.Fatal(err)
	}
	if got, want := storedData(t, dir, id), `{"big":12345678901234567890,"n":5,"new":[1.0,null],"nick":null,"title":"b"}`; got != want {
		t.Fatalf("limited replace\n got %s\nwant %s", got, want)
	}
	// Replace by a caller reaching every key: stored as given.
	if err := update(`{"title":"c","z":null,"rank":2}`, true, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := storedData(t, dir, id), `{"rank":2,"title":"c","z":null}`; got != want {
		t.Fatalf("replace\n got %s\nwant %s", got, want)
	}
	if err := update(`{"qty":1}`, true, nil); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("replace without a required field: %v", err)
	}

	// Keys named as the row's own columns are document keys like any
	// other, as in mini-app-mcp: the row keeps its own id and timestamps.
	res = write(t, s, query.Plan{Action: query.Insert, Docs: []json.RawMessage{json.RawMessage(`{"title":"k","id":"y","updated_at":null}`)}})
	kid := res.Returned[0][0].(string)
	if got := storedData(t, dir, kid); kid == "y" || got != `{"id":"y","title":"k","updated_at":null}` {
		t.Fatalf("row %s stored %s", kid, got)
	}
	if err := update(`{"id":"z"}`, false, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := storedData(t, dir, id), `{"id":"z","rank":2,"title":"c","z":null}`; got != want {
		t.Fatalf("merge of an id key\n got %s\nwant %s", got, want)
	}
	write(t, s, query.Plan{Action: query.Delete, Where: cond("id", query.Eq, kid)})

	// Refusals: a schema type, a missing required field, a non-object.
	for _, doc := range []string{`{"title":1}`, `[1]`, `{"qty":1}`, `{"title":"x"} {}`} {
		p := query.Plan{Action: query.Insert, Table: "items", Docs: []json.RawMessage{json.RawMessage(doc)}}
		if _, err := s.Write(context.Background(), &p); fault.KindOf(err) != fault.Invalid {
			t.Errorf("insert %s: %v", doc, err)
		}
	}

	// ORDER BY a key the schema does not name.
	write(t, s, query.Plan{Action: query.Insert, Docs: []json.RawMessage{json.RawMessage(`{"title":"r1","rank":1}`), json.RawMessage(`{"title":"r3","rank":3}`)}})
	if got := titles(t, s, nil, query.Order{Column: "rank", Desc: true}); len(got) != 3 || got[0] != "r3" || got[1] != "c" || got[2] != "r1" {
		t.Fatalf("order by rank: %v", got)
	}
	// Render shows the documents' stored text.
	st, err := Dialect{}.Render(&query.Plan{Action: query.Insert, Table: "items", Docs: []json.RawMessage{json.RawMessage(`{"title":"a","qty":5.0}`)}})
	if err != nil || st.Args[1] != `{"qty":5.0,"title":"a"}` {
		t.Fatalf("render: %v %v", st.Args, err)
	}
}
