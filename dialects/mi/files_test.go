package mi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestInsertGivenIDs: an insert plan's IDs are the ids its rows take
// (rendered in place of IDMarker, stored, returned); an id that is not a
// lower-case UUID is Invalid and a count that does not match the rows is
// Internal, before anything is written; a taken id is a Conflict.
func TestInsertGivenIDs(t *testing.T) {
	s, dir := openItems(t)
	ctx := context.Background()
	const id = "0b4f4b5e-8f2a-4c1e-9d7a-2a6f1e3c5b7d"
	plan := query.Plan{Action: query.Insert, Table: "items", Columns: []string{"title"}, Rows: [][]any{{"a"}}, IDs: []string{id}}
	st, err := Dialect{}.Render(&plan)
	if err != nil || st.Args[0] != id {
		t.Fatalf("render: %v %v", st.Args, err)
	}
	res := write(t, s, plan)
	if len(res.Returned) != 1 || res.Returned[0][0] != id {
		t.Fatalf("returned %v", res.Returned)
	}
	db := rawDB(t, dbFile(dir, "items"))
	if n := count(t, db, "SELECT COUNT(*) FROM rows WHERE id = ?", id); n != 1 {
		t.Fatalf("%d rows under the given id", n)
	}
	for _, c := range []struct {
		ids  []string
		kind fault.Kind
	}{
		{[]string{"0B4F4B5E-8F2A-4C1E-9D7A-2A6F1E3C5B7D"}, fault.Invalid},
		{[]string{"x"}, fault.Invalid},
		{[]string{id, id}, fault.Internal},
		{[]string{id}, fault.Conflict},
	} {
		p := plan
		p.IDs = c.ids
		if _, err := s.Write(ctx, &p); fault.KindOf(err) != c.kind {
			t.Fatalf("ids %v: %v, want %v", c.ids, err, c.kind)
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM rows"); n != 1 {
		t.Fatalf("%d rows after the refused inserts", n)
	}
}

// TestBatchUndo: a batch whose SQL fails leaves nothing behind: no
// schema.yaml, no file of the table it was creating, no backup of one it
// updates, the rows as they were; the failing op is named.
func TestBatchUndo(t *testing.T) {
	s, dir := openItems(t)
	ctx := context.Background()
	insertItems(t, s, []any{"a", nil, nil, nil, nil})
	o := dialects.FileOptions{Perm: 0o600, Keep: 2}
	def := []byte("table: fresh\nfields:\n- name: t\n  type: string\n")
	_, err := s.Batch(ctx, "fresh", []dialects.BatchOp{
		{Kind: dialects.BatchCreate, Def: def},
		{Kind: dialects.BatchQuery, SQL: "INSERT INTO nowhere VALUES (1)"},
	}, o)
	var fe *dialects.FileError
	if !asFileError(err, &fe) || fe.Step != dialects.StepOp || fe.Index != 1 {
		t.Fatalf("failed batch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh")); !os.IsNotExist(err) {
		t.Fatalf("the failed create left %v", err)
	}
	_, err = s.Batch(ctx, "items", []dialects.BatchOp{
		{Kind: dialects.BatchQuery, SQL: "DELETE FROM rows"},
		{Kind: dialects.BatchQuery, SQL: "DELETE FROM nowhere"},
	}, o)
	if !asFileError(err, &fe) || fe.Step != dialects.StepOp || fe.Index != 1 {
		t.Fatalf("failed batch: %v", err)
	}
	if n, err := s.CountRows(ctx, "items"); err != nil || n != 1 {
		t.Fatalf("rows after the failed batch: %d %v", n, err)
	}
	// A table without a file counts none, and no file is made.
	if n, err := s.CountRows(ctx, "absent"); err != nil || n != 0 {
		t.Fatalf("absent table: %d %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "absent")); !os.IsNotExist(err) {
		t.Fatalf("CountRows made %v", err)
	}
}

func asFileError(err error, fe **dialects.FileError) bool { return errors.As(err, fe) }
