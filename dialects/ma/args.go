package ma

import (
	"time"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/query"
)

// zoneLayouts are the spellings of a timestamp with a zone that adapt
// converts: RFC 3339 and its space-separated form, with the offset as Z,
// ±hh:mm, ±hhmm or ±hh. The fraction is optional.
var zoneLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999-0700",
	"2006-01-02 15:04:05.999999999-0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999Z07",
}

// parseZoned parses s when it names a zone.
func parseZoned(s string) (time.Time, bool) {
	// Cheap test first: a zone ends the string with Z or a digit after a
	// sign past the time of day.
	if len(s) < 20 {
		return time.Time{}, false
	}
	for _, l := range zoneLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// adaptValue rewrites a value bound to a column of kind k into a form the
// server takes as the engine means it. MariaDB and MySQL (before 8.0.19)
// refuse a zone in a date-time literal: for a TIMESTAMP the instant is
// converted to UTC, the session's zone; for a DATETIME the zone is dropped
// and the wall-clock time kept, as PostgreSQL does for timestamp without
// time zone. Other values are returned as they are.
func adaptValue(k dialects.Kind, v any) (any, bool) {
	if k != dialects.KindTimestampTZ && k != dialects.KindTimestamp {
		return v, false
	}
	s, ok := v.(string)
	if !ok {
		return v, false // time.Time is sent in UTC by the driver
	}
	t, ok := parseZoned(s)
	if !ok {
		return v, false
	}
	if k == dialects.KindTimestampTZ {
		t = t.UTC()
	}
	return t.Format("2006-01-02 15:04:05.999999999"), true
}

// adapt returns p with the values bound to timestamp columns adapted (see
// adaptValue). The plan is copied, never changed, and returned as it is
// when nothing needs adapting.
func adapt(p *query.Plan, meta *tableMeta) *query.Plan {
	if meta == nil || !meta.hasTimestamps {
		return p
	}
	kind := func(col string) dialects.Kind { return meta.kinds[col] }
	cp := *p
	changed, rowsCopied, setCopied := false, false, false
	if w, ok := adaptExpr(p.Where, kind); ok {
		cp.Where, changed = w, true
	}
	// Having names group columns and aggregates: min and max have their
	// column's kind.
	resultKind := func(col string) dialects.Kind {
		for _, a := range p.Aggregates {
			if a.Alias == col {
				return dialects.AggregateKind(a.Func, kind(a.Column))
			}
		}
		return kind(col)
	}
	if h, ok := adaptExpr(p.Having, resultKind); ok {
		cp.Having, changed = h, true
	}
	for i, c := range p.Columns {
		k := kind(c)
		for r, row := range p.Rows {
			if i >= len(row) {
				continue
			}
			v, ok := adaptValue(k, row[i])
			if !ok {
				continue
			}
			if !rowsCopied {
				cp.Rows, rowsCopied = cloneRows(p.Rows), true
			}
			cp.Rows[r][i] = v
			changed = true
		}
	}
	for i, a := range p.Set {
		v, ok := adaptValue(kind(a.Column), a.Value)
		if !ok {
			continue
		}
		if !setCopied {
			cp.Set, setCopied = append([]query.Assign(nil), p.Set...), true
		}
		cp.Set[i].Value = v
		changed = true
	}
	if !changed {
		return p
	}
	return &cp
}

func cloneRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = append([]any(nil), r...)
	}
	return out
}

// adaptExpr returns e with adapted values, and whether anything changed.
func adaptExpr(e query.Expr, kind func(string) dialects.Kind) (query.Expr, bool) {
	list := func(items []query.Expr) ([]query.Expr, bool) {
		var out []query.Expr
		for i, it := range items {
			x, ok := adaptExpr(it, kind)
			if !ok {
				continue
			}
			if out == nil {
				out = append([]query.Expr(nil), items...)
			}
			out[i] = x
		}
		return out, out != nil
	}
	switch x := e.(type) {
	case *query.Cond:
		if x == nil {
			return e, false
		}
		k := kind(x.Column)
		var args []any
		for i, a := range x.Args {
			v, ok := adaptValue(k, a)
			if !ok {
				continue
			}
			if args == nil {
				args = append([]any(nil), x.Args...)
			}
			args[i] = v
		}
		if args == nil {
			return e, false
		}
		return &query.Cond{Column: x.Column, Op: x.Op, Args: args}, true
	case query.And:
		if out, ok := list(x); ok {
			return query.And(out), true
		}
	case *query.And:
		if x != nil {
			if out, ok := list(*x); ok {
				return query.And(out), true
			}
		}
	case query.Or:
		if out, ok := list(x); ok {
			return query.Or(out), true
		}
	case *query.Or:
		if x != nil {
			if out, ok := list(*x); ok {
				return query.Or(out), true
			}
		}
	case query.Not:
		if y, ok := adaptExpr(x.X, kind); ok {
			return query.Not{X: y}, true
		}
	case *query.Not:
		if x != nil {
			if y, ok := adaptExpr(x.X, kind); ok {
				return query.Not{X: y}, true
			}
		}
	}
	return e, false
}
