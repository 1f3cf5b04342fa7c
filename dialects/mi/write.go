package mi

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// History operations, the values _row_history.op allows.
const (
	opCreate = "create"
	opUpdate = "update"
	opDelete = "delete"
)

// Write runs an insert, update or delete in one SQLite transaction that
// also appends the rows' history entries, so both land or neither does.
func (s *Source) Write(ctx context.Context, p *query.Plan) (dialects.WriteResult, error) {
	if p == nil {
		return dialects.WriteResult{}, fault.New(fault.Internal, "mi: nil plan")
	}
	if err := checkWriteOptions(p); err != nil {
		return dialects.WriteResult{}, err
	}
	if p.Action == query.Update {
		if err := checkSet(p.Set, fault.Invalid); err != nil {
			return dialects.WriteResult{}, err
		}
	}
	var st dialects.Stmt
	if p.Action != query.Insert {
		// Checks the plan and gives the selection update and delete run.
		var err error
		if st, err = (Dialect{}).Render(p); err != nil {
			return dialects.WriteResult{}, err
		}
	}
	sc, t, err := s.table(ctx, p.Table)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	w := &writer{sc: sc, now: s.now().Unix(), purge: envPurgePolicy()}
	var (
		res  dialects.WriteResult
		body func(*sql.Tx) error
	)
	switch p.Action {
	case query.Insert:
		objs, data, err := w.prepareInsert(p)
		if err != nil {
			return dialects.WriteResult{}, err
		}
		if p.IDs != nil && len(p.IDs) != len(objs) {
			return dialects.WriteResult{}, fault.New(fault.Internal, "mi: an insert of %d rows with %d ids", len(objs), len(p.IDs))
		}
		for _, id := range p.IDs {
			if !validID(id) {
				return dialects.WriteResult{}, fault.New(fault.Invalid, "row id %q is not a UUID", id)
			}
		}
		docs := len(p.Docs) > 0
		body = func(tx *sql.Tx) error { return w.insert(ctx, tx, objs, data, p.IDs, docs, &res) }
	case query.Update:
		var apply change
		if len(p.Docs) > 0 {
			if apply, err = w.docChange(p); err != nil {
				return dialects.WriteResult{}, err
			}
		} else {
			patch, err := updatePatch(p.Set)
			if err != nil {
				return dialects.WriteResult{}, err
			}
			apply = w.setChange(patch)
		}
		body = func(tx *sql.Tx) error { return w.update(ctx, tx, st, apply, &res) }
	case query.Delete:
		body = func(tx *sql.Tx) error { return w.delete(ctx, tx, st, &res) }
	default:
		return dialects.WriteResult{}, fault.New(fault.Internal, "mi: Write needs an insert, update or delete plan")
	}
	if err := t.lockWrite(ctx); err != nil {
		return dialects.WriteResult{}, storageErr(ctx, err)
	}
	defer t.unlockWrite()
	if err := inTx(ctx, t.db, body); err != nil {
		return dialects.WriteResult{}, storageErr(ctx, err)
	}
	return res, nil
}

// prepareInsert builds, checks and encodes every row before the
// transaction starts, so a bad row costs no lock.
func (w *writer) prepareInsert(p *query.Plan) ([]map[string]any, []string, error) {
	var objs []map[string]any
	var err error
	if len(p.Docs) > 0 {
		objs, err = docObjects(p)
	} else {
		objs, err = insertObjects(p, fault.Invalid)
	}
	if err != nil {
		return nil, nil, err
	}
	data := make([]string, len(objs))
	for i, obj := range objs {
		if ferr := w.sc.validate(obj); ferr != nil {
			return nil, nil, prefixed(ferr, rowPrefix(p, i))
		}
		if data[i], err = encodeJSON(obj); err != nil {
			return nil, nil, fault.Wrap(fault.Invalid, err, "%srow cannot be stored as JSON", rowPrefix(p, i))
		}
	}
	return objs, data, nil
}

// inTx runs fn in a transaction, committing only if fn succeeds.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// writer carries what one Write call shares across its rows.
type writer struct {
	sc    *schema
	now   int64
	purge purgePolicy
}

// insert stores the rows and returns each with every column; with docs
// (an insert of documents) each returned row ends with its document as
// stored, in query.DocColumn.
func (w *writer) insert(ctx context.Context, tx *sql.Tx, objs []map[string]any, data []string, ids []string, docs bool, res *dialects.WriteResult) error {
	stmt, err := tx.PrepareContext(ctx, insertRow)
	if err != nil {
		return err
	}
	defer stmt.Close()
	n := len(w.sc.columns)
	res.Columns = append([]dialects.Column(nil), w.sc.columns...)
	if docs {
		res.Columns = append(res.Columns, docColumn)
	}
	for i, obj := range objs {
		id := uuid.NewString()
		if ids != nil {
			id = ids[i]
		}
		if _, err := stmt.ExecContext(ctx, id, data[i], w.now, w.now); err != nil {
			return err
		}
		if err := w.history(ctx, tx, id, opCreate, data[i]); err != nil {
			return err
		}
		vals := make([]any, len(res.Columns))
		project(res.Columns[:n], vals[:n], id, obj, w.now, w.now)
		if docs {
			vals[n] = json.RawMessage(data[i])
		}
		res.Returned = append(res.Returned, vals)
	}
	res.RowsAffected = int64(len(objs))
	return nil
}

// patchValue is one key of an update: a new value, or a removal.
type patchValue struct {
	key    string
	value  any
	remove bool
}

// updatePatch turns the plan's assignments into a shallow merge patch: nil
// (or Default{}) removes the key, anything else replaces it wholesale.
func updatePatch(set []query.Assign) ([]patchValue, error) {
	out := make([]patchValue, 0, len(set))
	for _, a := range set {
		if _, def := a.Value.(query.Default); def || a.Value == nil {
			out = append(out, patchValue{key: a.Column, remove: true})
			continue
		}
		v, err := toValue(a.Value)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "field %q: value cannot be stored as JSON", a.Column)
		}
		if v == nil {
			out = append(out, patchValue{key: a.Column, remove: true})
			continue
		}
		out = append(out, patchValue{key: a.Column, value: v})
	}
	return out, nil
}

// selected is one row an update or delete acts on.
type selected struct{ id, data string }

func selectRowsTx(ctx context.Context, tx *sql.Tx, st dialects.Stmt) ([]selected, error) {
	rs, err := tx.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []selected
	for rs.Next() {
		var r selected
		if err := rs.Scan(&r.id, &r.data); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// change turns a selected row's stored object into its new one.
type change func(obj map[string]any) (map[string]any, error)

// setChange applies an update's assignments: a shallow merge where a
// removal of a required field is refused.
func (w *writer) setChange(patch []patchValue) change {
	return func(obj map[string]any) (map[string]any, error) {
		for _, pv := range patch {
			if !pv.remove {
				obj[pv.key] = pv.value
				continue
			}
			if w.sc.required(pv.key) {
				return nil, fault.New(fault.Invalid, "field %q: required field cannot be deleted via null", pv.key)
			}
			delete(obj, pv.key)
		}
		return obj, nil
	}
}

// docChange applies an update's one document (query.Plan.Docs): merged as
// a shallow merge patch (null removes a key; a required field cannot be
// removed), or with DocReplace as the new document, keeping the stored
// keys outside DocKeys (those the caller's grant does not reach).
func (w *writer) docChange(p *query.Plan) (change, error) {
	if len(p.Docs) != 1 {
		return nil, fault.New(fault.Invalid, "an update carries one document, not %d", len(p.Docs))
	}
	doc, err := decodeObject(string(p.Docs[0]))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "the document is not a JSON object")
	}
	if p.DocReplace {
		var keys map[string]bool
		if p.DocKeys != nil {
			keys = make(map[string]bool, len(p.DocKeys))
			for _, k := range p.DocKeys {
				keys[k] = true
			}
		}
		return func(obj map[string]any) (map[string]any, error) {
			next := make(map[string]any, len(doc))
			for k, v := range obj {
				if keys != nil && !keys[k] {
					next[k] = v
				}
			}
			for k, v := range doc {
				next[k] = v
			}
			return next, nil
		}, nil
	}
	return func(obj map[string]any) (map[string]any, error) {
		for k, v := range doc {
			if v != nil {
				obj[k] = v
				continue
			}
			if w.sc.required(k) {
				return nil, fault.New(fault.Invalid, "field %q: required field cannot be deleted via null", k)
			}
			delete(obj, k)
		}
		return obj, nil
	}, nil
}

func (w *writer) update(ctx context.Context, tx *sql.Tx, st dialects.Stmt, apply change, res *dialects.WriteResult) error {
	matched, err := selectRowsTx(ctx, tx, st)
	if err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `UPDATE rows SET data = ?, updated_at = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, m := range matched {
		obj, err := decodeObject(m.data)
		if err != nil {
			return fault.Wrap(fault.Internal, err, "row %s: stored data is not a JSON object", m.id)
		}
		if obj, err = apply(obj); err != nil {
			return err
		}
		if ferr := w.sc.validate(obj); ferr != nil {
			return ferr
		}
		data, err := encodeJSON(obj)
		if err != nil {
			return fault.Wrap(fault.Invalid, err, "row cannot be stored as JSON")
		}
		if _, err := stmt.ExecContext(ctx, data, w.now, m.id); err != nil {
			return err
		}
		if err := w.history(ctx, tx, m.id, opUpdate, data); err != nil {
			return err
		}
	}
	res.RowsAffected = int64(len(matched))
	return nil
}

func (w *writer) delete(ctx context.Context, tx *sql.Tx, st dialects.Stmt, res *dialects.WriteResult) error {
	matched, err := selectRowsTx(ctx, tx, st)
	if err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM rows WHERE id = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, m := range matched {
		if _, err := stmt.ExecContext(ctx, m.id); err != nil {
			return err
		}
		// A delete entry keeps the data as it was, byte for byte.
		if err := w.history(ctx, tx, m.id, opDelete, m.data); err != nil {
			return err
		}
	}
	res.RowsAffected = int64(len(matched))
	return nil
}

// history appends one _row_history entry, numbered after every earlier
// entry of the row (raw or archived), unless the schema turned history off,
// and rolls the row's oldest entries into the archive when it has too many
// (archive.go).
func (w *writer) history(ctx context.Context, tx *sql.Tx, id, op, data string) error {
	if !w.sc.History {
		return nil
	}
	var version int64
	if err := tx.QueryRowContext(ctx, nextVersionSQL, w.sc.Table, id).Scan(&version); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, insertHistorySQL, w.sc.Table, id, version, w.now, op, data); err != nil {
		return err
	}
	return rollHistory(ctx, tx, w.purge, w.sc.Table, id)
}

// validID reports whether id has the form of the ids rows are given: a
// UUID in lower case.
func validID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}
