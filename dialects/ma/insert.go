package ma

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// maxChunkBytes bounds the values of one insert statement, well under the
// smallest max_allowed_packet in use (MariaDB's default is 16 MiB), so a
// large batch is split before the server refuses a packet. A single value
// larger than this still goes alone, and fails if the server's limit is
// smaller.
const maxChunkBytes = 4 << 20

// insert runs an insert plan: with RETURNING * where the server has it
// (MariaDB 10.5+), one statement per chunk of rows, the chunks in one
// transaction; otherwise through insertReadBack. A merge under a row
// scope answers, and counts as affected, only the rows inside the scope
// after it (see renderScopedMerge): a conflicting row outside it is left
// as it was and not shown. An upsert that keeps conflicting rows for a
// read-scoped caller answers only the rows inside the read scope
// (renderScopedIgnore).
func (s *Source) insert(ctx context.Context, p *query.Plan, meta *tableMeta) (dialects.WriteResult, error) {
	info, err := s.serverInfo(ctx)
	if err != nil {
		return dialects.WriteResult{}, err
	}
	if !info.returning {
		if len(p.OnConflict) > 0 {
			// Read back by key, an updated row would pass for a new one.
			return dialects.WriteResult{}, fault.New(fault.Unsupported, "upsert (on_conflict) needs MariaDB 10.5 or later (INSERT … RETURNING); this server is %s", info.version)
		}
		return s.insertReadBack(ctx, p, meta, info)
	}
	if len(p.OnConflict) > 0 {
		if err := s.checkConflictKey(ctx, p); err != nil {
			return dialects.WriteResult{}, err
		}
	}
	scoped := scopedMerge(p) || scopedIgnore(p)
	chunks := chunkRows(p, max(maxParams-scopeArgs(p), 1), maxChunkBytes)
	stmts := make([]dialects.Stmt, len(chunks))
	for i, c := range chunks {
		if stmts[i], err = (Dialect{}).Render(c); err != nil {
			return dialects.WriteResult{}, err
		}
	}
	var res dialects.WriteResult
	run := func(tx *sql.Tx) error {
		for _, st := range stmts {
			r, err := s.query(ctx, tx, st, meta)
			if err != nil {
				return err
			}
			for r.Next() {
				vals, err := r.Values()
				if err != nil {
					r.closeAll()
					return err
				}
				if scoped {
					// The last column: is the row inside the scope?
					in, last := false, len(vals)-1
					if last < 0 {
						r.closeAll()
						return fault.New(fault.Internal, "ma: a scoped merge returned no columns")
					}
					switch x := vals[last].(type) {
					case int64:
						in = x == 1
					case uint64:
						in = x == 1
					case string:
						in = x == "1"
					case []byte:
						in = string(x) == "1"
					}
					if !in {
						continue // a conflicting row outside the scope, left as it was
					}
					vals = vals[:last]
				}
				res.Returned = append(res.Returned, append([]any(nil), vals...))
			}
			if err := r.Close(); err != nil {
				return err
			}
			res.Columns = r.cols
			if scoped && len(res.Columns) > 0 {
				res.Columns = res.Columns[:len(res.Columns)-1]
			}
		}
		return nil
	}
	if len(stmts) == 1 {
		err = run(nil) // one statement is atomic on its own
	} else {
		err = s.inTx(ctx, run)
	}
	if err != nil {
		return dialects.WriteResult{}, err
	}
	res.RowsAffected = int64(len(res.Returned))
	return res, nil
}

// insertReadBack inserts without RETURNING (MySQL, MariaDB before 10.5) and
// reads the inserted rows back by primary key in the same transaction.
//
// Generated keys come from LAST_INSERT_ID(), which is the first id a
// statement generated: for a multi-row INSERT … VALUES whose rows all leave
// the AUTO_INCREMENT column to the server (a "simple insert": the row count
// is known up front), InnoDB reserves the ids as one block under every
// innodb_autoinc_lock_mode (0, 1 and 2; mode 2 leaves gaps only in bulk
// inserts such as INSERT … SELECT, which are never issued here), so row i
// got first + i × auto_increment_increment. Rows that
// mix given and generated ids ("mixed-mode inserts", where the block may
// have holes) are inserted one statement per row instead. Rows whose key
// cannot be known (no primary key, or a key column filled by a default
// other than AUTO_INCREMENT) are inserted but not returned.
func (s *Source) insertReadBack(ctx context.Context, p *query.Plan, meta *tableMeta, info *serverInfo) (dialects.WriteResult, error) {
	d := Dialect{NoReturning: true}
	plan := newReadBack(p, meta)
	var chunks []*query.Plan
	if plan.perRow {
		for i := range p.Rows {
			c := *p
			c.Rows = p.Rows[i : i+1]
			chunks = append(chunks, &c)
		}
	} else {
		chunks = chunkRows(p, maxParams, maxChunkBytes)
	}
	var res dialects.WriteResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		row := 0
		for _, c := range chunks {
			st, err := d.Render(c)
			if err != nil {
				return err
			}
			r, err := s.execOn(ctx, tx, st.SQL, st.Args)
			if err != nil {
				return err
			}
			n, err := r.RowsAffected()
			if err != nil {
				return err
			}
			res.RowsAffected += n
			first, err := r.LastInsertId()
			if err != nil {
				return err
			}
			for i := range c.Rows {
				plan.generated(row, first+int64(i)*info.autoincStep)
				row++
			}
		}
		if !plan.ok {
			return nil
		}
		returned, cols, err := s.readBack(ctx, tx, p, meta, plan)
		if err != nil {
			return err
		}
		res.Returned, res.Columns = returned, cols
		return nil
	})
	if err != nil {
		return dialects.WriteResult{}, err
	}
	return res, nil
}

// readBackPlan holds the primary key of every inserted row as it becomes
// known.
type readBackPlan struct {
	ok     bool // every row's key can be known
	perRow bool // rows mix given and generated ids: one statement each
	pk     []string
	keys   [][]any // per row, per key column
	auto   int     // index in pk of the AUTO_INCREMENT column, or -1
	gen    []bool  // per row: its AUTO_INCREMENT value comes from the server
}

func newReadBack(p *query.Plan, meta *tableMeta) *readBackPlan {
	rb := &readBackPlan{auto: -1}
	if meta == nil || len(meta.pk) == 0 {
		return rb
	}
	rb.ok, rb.pk = true, meta.pk
	colIdx := map[string]int{}
	for i, c := range p.Columns {
		colIdx[c] = i
	}
	rb.keys = make([][]any, len(p.Rows))
	rb.gen = make([]bool, len(p.Rows))
	given, generated := 0, 0
	for r, row := range p.Rows {
		rb.keys[r] = make([]any, len(rb.pk))
		for k, name := range rb.pk {
			i, present := colIdx[name]
			var v any = query.Default{}
			if present {
				v = row[i]
			}
			if name == meta.autoinc {
				rb.auto = k
				if autoGenerated(v) {
					rb.gen[r] = true
					generated++
				} else {
					given++
				}
			} else if _, isDef := v.(query.Default); isDef || v == nil {
				rb.ok = false // filled by the server, not knowable
			}
			rb.keys[r][k] = v
		}
	}
	rb.perRow = given > 0 && generated > 0
	return rb
}

// autoGenerated reports whether the server generates an AUTO_INCREMENT
// value for v: DEFAULT, NULL, and 0 (unless NO_AUTO_VALUE_ON_ZERO, in which
// case the row is read back by the 0 it stored, as LAST_INSERT_ID says).
func autoGenerated(v any) bool {
	switch x := v.(type) {
	case query.Default, nil:
		return true
	case int64:
		return x == 0
	case string:
		return x == "0"
	case json.Number:
		return x == "0"
	}
	return false
}

// generated records the id LAST_INSERT_ID() implies for row r.
func (rb *readBackPlan) generated(r int, id int64) {
	if !rb.ok || rb.auto < 0 || !rb.gen[r] {
		return
	}
	if id <= 0 {
		rb.ok = false // nothing was generated after all
		return
	}
	rb.keys[r][rb.auto] = id
}

// readBack selects the inserted rows by key and returns them in insert
// order; it returns nothing if any row is not found as keyed (a key value
// the server stored differently from how it was sent).
func (s *Source) readBack(ctx context.Context, tx *sql.Tx, p *query.Plan, meta *tableMeta, rb *readBackPlan) ([][]any, []dialects.Column, error) {
	perStmt := max(maxParams/len(rb.pk), 1)
	want := map[string]int{} // key → row
	for r, key := range rb.keys {
		want[keyString(key)] = r
	}
	out := make([][]any, len(rb.keys))
	var cols []dialects.Column
	found := 0
	for start := 0; start < len(rb.keys); start += perStmt {
		end := min(start+perStmt, len(rb.keys))
		read := &query.Plan{Action: query.Read, Schema: p.Schema, Table: p.Table, Where: keyFilter(rb.pk, rb.keys[start:end])}
		st, err := Dialect{}.Render(read)
		if err != nil {
			return nil, nil, err
		}
		r, err := s.query(ctx, tx, st, meta)
		if err != nil {
			return nil, nil, err
		}
		pkAt := make([]int, len(rb.pk))
		for k, name := range rb.pk {
			pkAt[k] = -1
			for i, c := range r.cols {
				if c.Name == name {
					pkAt[k] = i
				}
			}
		}
		for r.Next() {
			vals, err := r.Values()
			if err != nil {
				r.closeAll()
				return nil, nil, err
			}
			key := make([]any, len(pkAt))
			for k, i := range pkAt {
				if i >= 0 {
					key[k] = vals[i]
				}
			}
			if row, ok := want[keyString(key)]; ok && out[row] == nil {
				out[row] = append([]any(nil), vals...)
				found++
			}
		}
		if err := r.Close(); err != nil {
			return nil, nil, err
		}
		cols = r.cols
	}
	if found != len(out) {
		return nil, nil, nil
	}
	return out, cols, nil
}

// keyFilter selects rows by primary key: pk IN (…) for one column, an OR of
// ANDs for several.
func keyFilter(pk []string, keys [][]any) query.Expr {
	if len(pk) == 1 {
		args := make([]any, len(keys))
		for i, k := range keys {
			args[i] = k[0]
		}
		return &query.Cond{Column: pk[0], Op: query.In, Args: args}
	}
	or := make(query.Or, len(keys))
	for i, k := range keys {
		and := make(query.And, len(pk))
		for j, name := range pk {
			and[j] = &query.Cond{Column: name, Op: query.Eq, Args: []any{k[j]}}
		}
		or[i] = and
	}
	return or
}

// keyString is a comparable form of a key as sent and as read back: each
// part's text, length-prefixed so that no two keys share a form.
func keyString(key []any) string {
	var b strings.Builder
	for _, v := range key {
		var part string
		switch x := v.(type) {
		case int64:
			part = strconv.FormatInt(x, 10)
		case uint64:
			part = strconv.FormatUint(x, 10)
		case float64:
			part = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			part = "0"
			if x {
				part = "1"
			}
		case string:
			part = x
		case json.Number:
			part = string(x)
		case []byte:
			part = string(x)
		case time.Time:
			part = x.UTC().Format("2006-01-02 15:04:05.999999")
		default:
			b.WriteString("?;") // matches nothing read back
			continue
		}
		b.WriteString(strconv.Itoa(len(part)))
		b.WriteByte(':')
		b.WriteString(part)
	}
	return b.String()
}

// chunkRows splits an insert so that no statement binds more than maxArgs
// values or about maxBytes of them; DEFAULT cells bind none. A plan that
// fits is returned as is.
func chunkRows(p *query.Plan, maxArgs, maxBytes int) []*query.Plan {
	var out []*query.Plan
	start, args, size := 0, 0, 0
	for i, row := range p.Rows {
		k, n := 0, 0
		for _, v := range row {
			if _, ok := v.(query.Default); !ok {
				k++
				n += valueSize(v)
			}
		}
		if (args+k > maxArgs || size+n > maxBytes) && i > start {
			c := *p
			c.Rows = p.Rows[start:i]
			out = append(out, &c)
			start, args, size = i, 0, 0
		}
		args += k
		size += n
	}
	if start == 0 {
		return []*query.Plan{p}
	}
	c := *p
	c.Rows = p.Rows[start:]
	return append(out, &c)
}

// valueSize estimates the bytes a bound value takes in the execute packet.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 9
	case []byte:
		return len(x) + 9
	case json.RawMessage:
		return len(x) + 9
	case json.Number:
		return len(x) + 9
	}
	return 10
}

// uniqueKeysSQL lists the columns of each unique index (the primary key
// included) of a table, in key order.
const uniqueKeysSQL = `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX`

// checkConflictKey refuses an upsert whose on_conflict columns are not
// exactly the columns of one unique key: ON DUPLICATE KEY UPDATE finds a
// duplicate on any unique key, whatever on_conflict names, so an upsert
// naming a column that is no key would merge rows matched by another one.
func (s *Source) checkConflictKey(ctx context.Context, p *query.Plan) error {
	rs, err := s.db.QueryContext(ctx, uniqueKeysSQL, p.Schema, p.Table)
	if err != nil {
		return s.err(ctx, err)
	}
	defer rs.Close()
	keys := map[string][]string{}
	for rs.Next() {
		var index, col string
		if err := rs.Scan(&index, &col); err != nil {
			return s.err(ctx, err)
		}
		keys[index] = append(keys[index], col)
	}
	if err := rs.Err(); err != nil {
		return s.err(ctx, err)
	}
	want := slices.Sorted(slices.Values(p.OnConflict))
	for _, cols := range keys {
		slices.Sort(cols)
		if slices.Equal(cols, want) {
			return nil
		}
	}
	return dialects.NoUniqueKey(nil, p.OnConflict)
}
