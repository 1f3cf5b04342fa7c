package ma

import (
	"context"
	"database/sql"
	"slices"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// deleteReturning runs a DELETE … RETURNING (query.Plan.Return; MariaDB
// 10.0 and later, not MySQL) and answers the deleted rows.
func (s *Source) deleteReturning(ctx context.Context, st dialects.Stmt, meta *tableMeta) (dialects.WriteResult, error) {
	info, err := s.serverInfo(ctx)
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	if !info.mariaDB {
		return dialects.WriteResult{}, fault.New(fault.Unsupported, "return=rows on delete needs MariaDB (DELETE … RETURNING); this server is MySQL %s", info.version)
	}
	r, err := s.query(ctx, nil, st, meta)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	defer r.Close()
	res := dialects.WriteResult{Columns: r.Columns(), Returned: [][]any{}}
	for r.Next() {
		vals, err := r.Values()
		if err != nil {
			return dialects.WriteResult{}, err
		}
		res.Returned = append(res.Returned, append([]any(nil), vals...))
	}
	if err := r.Err(); err != nil {
		return dialects.WriteResult{}, err
	}
	res.RowsAffected = int64(len(res.Returned))
	return res, nil
}

// readBackKeys is how many keys one read-back statement binds at most.
const readBackKeys = 1000

// updateReturning runs an update that answers the rows it changed
// (query.Plan.Return). MariaDB has DELETE … RETURNING and INSERT …
// RETURNING but no UPDATE … RETURNING, so in one transaction it reads and
// locks the primary keys of the rows the filter selects (SELECT … FOR
// UPDATE), runs the update, and reads those rows back by their keys (a key
// the update sets is read back at its new value), with only the plan's
// Columns: those the caller may read. A table without a primary key is
// refused as Unsupported before anything is written, as is an update that
// sets a key column to DEFAULT (its new value is unknown).
func (s *Source) updateReturning(ctx context.Context, p *query.Plan, meta *tableMeta) (dialects.WriteResult, error) {
	if len(meta.pk) == 0 {
		return dialects.WriteResult{}, fault.New(fault.Unsupported, "return=rows on update needs a primary key on MariaDB: it has no UPDATE … RETURNING, so the updated rows are read back by their key, and table %q has none", p.Table)
	}
	newKey := map[string]any{}
	for _, a := range p.Set {
		if !slices.Contains(meta.pk, a.Column) {
			continue
		}
		if _, def := a.Value.(query.Default); def {
			return dialects.WriteResult{}, fault.New(fault.Unsupported, "return=rows on an update that sets the key column %q to its default is not supported by MariaDB: the row cannot be read back by its new key", a.Column)
		}
		newKey[a.Column] = a.Value
	}
	keyRead := &query.Plan{Action: query.Read, Schema: p.Schema, Table: p.Table, Columns: meta.pk, Where: p.Where}
	keySt, err := Dialect{}.Render(keyRead)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	keySt.SQL += " FOR UPDATE"
	up := *p
	up.Return, up.Columns = false, nil
	upSt, err := Dialect{}.Render(&up)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	var res dialects.WriteResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := s.query(ctx, tx, keySt, meta)
		if err != nil {
			return err
		}
		var keys [][]any
		for r.Next() {
			vals, err := r.Values()
			if err != nil {
				_ = r.Close()
				return err
			}
			k := append([]any(nil), vals...)
			for i, c := range meta.pk {
				if v, ok := newKey[c]; ok {
					k[i] = v
				}
			}
			keys = append(keys, k)
		}
		if err := r.Close(); err != nil {
			return err
		}
		ur, err := s.execOn(ctx, tx, upSt.SQL, upSt.Args)
		if err != nil {
			return s.err(ctx, err)
		}
		if res.RowsAffected, err = ur.RowsAffected(); err != nil {
			return s.err(ctx, err)
		}
		res.Returned = [][]any{}
		for start := 0; start < len(keys) || start == 0; start += readBackKeys {
			chunk := keys[start:min(start+readBackKeys, len(keys))]
			read := adapt(&query.Plan{Action: query.Read, Schema: p.Schema, Table: p.Table, Columns: p.Columns, Where: keyFilter(meta.pk, chunk)}, meta)
			st, err := Dialect{}.Render(read)
			if err != nil {
				return err
			}
			r, err := s.query(ctx, tx, st, meta)
			if err != nil {
				return err
			}
			for r.Next() {
				vals, err := r.Values()
				if err != nil {
					_ = r.Close()
					return err
				}
				res.Returned = append(res.Returned, append([]any(nil), vals...))
			}
			if err := r.Close(); err != nil {
				return err
			}
			res.Columns = r.Columns()
		}
		return nil
	})
	if err != nil {
		return dialects.WriteResult{}, s.err(ctx, err)
	}
	return res, nil
}
