package dialecttest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// The REST additions (counts, or= trees, upserts, return=rows, aggregates)
// as the engine hands them to a Source: the same plans, the same seed
// rows, the same figures on every dialect.

// aggRead is an aggregate read of conf_items.
func (s *suite) aggRead(where query.Expr, group []string, aggs ...query.Aggregate) *query.Plan {
	p := s.readPlan(TableItems, where)
	p.GroupBy, p.Aggregates = group, aggs
	return p
}

func agg(f query.AggFunc, col, alias string) query.Aggregate {
	return query.Aggregate{Func: f, Column: col, Alias: alias}
}

// figure reads an aggregate cell as a number; NULL is NaN.
func figure(t *testing.T, v any) float64 {
	t.Helper()
	if v == nil {
		return math.NaN()
	}
	f, ok := floatOf(v)
	if !ok {
		if str, isStr := v.(string); isStr {
			if _, err := fmt.Sscan(str, &f); err == nil {
				return f
			}
		}
		t.Fatalf("aggregate cell %#v (%T) is not a number", v, v)
	}
	return f
}

func sameFigure(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// exactCount is what count=exact runs: count() as an aggregate read with
// the read's filter.
func (s *suite) exactCount(t *testing.T, where query.Expr) int {
	t.Helper()
	_, rows := readAll(t, s.src, s.aggRead(where, nil, agg(query.AggCount, "", "n")))
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("count() answered %v, want one row of one value", rows)
	}
	return int(figure(t, rows[0][0]))
}

// testCount checks count=exact (the aggregate count of a filter equals the
// rows a read with it returns) and count=planned|estimated: a source
// declared able to estimate is a dialects.Estimator whose estimates are
// never negative, with or without a filter, and a missing table is
// NotFound; a source that lacks it is no Estimator (the engine counts).
func (s *suite) testCount(t *testing.T) {
	n := func(v float64) any { return num(s.numKind, v) }
	filters := []struct {
		name  string
		where query.Expr
	}{
		{"no filter", nil},
		{"eq", cond("qty", query.Eq, n(25))},
		{"or tree", query.Or{cond("name", query.Eq, "Ann"),
			query.And{cond("qty", query.Ge, n(25)), query.Not{X: cond("ratio", query.Lt, 7.0)}}}},
		{"matching nothing", cond("name", query.Eq, "none")},
		{"null test", cond("qty", query.IsNull)},
	}
	for _, f := range filters {
		got, want := s.exactCount(t, f.where), s.count(t, TableItems, f.where)
		if got != want {
			t.Errorf("exact count %s: %d, but the read returns %d rows", f.name, got, want)
		}
	}
	if s.exactCount(t, nil) != len(items) {
		t.Errorf("exact count of conf_items: want %d", len(items))
	}

	est, ok := s.src.(dialects.Estimator)
	if s.h.Lacks.Estimate != "" {
		if ok {
			t.Errorf("the source is a dialects.Estimator although Lacks.Estimate is declared (%s): remove the lack", s.h.Lacks.Estimate)
		}
		s.notTested(t, "planned and estimated counts (counted exactly)", "Estimate", s.h.Lacks.Estimate)
		return
	}
	if !ok {
		t.Fatal("the source is no dialects.Estimator: implement it or declare Lacks.Estimate with the reason")
	}
	for _, f := range filters {
		ctx, cancel := ctxT()
		got, err := est.Estimate(ctx, s.readPlan(TableItems, f.where))
		cancel()
		if err != nil {
			t.Errorf("Estimate %s: %v", f.name, err)
			continue
		}
		if got < 0 {
			t.Errorf("Estimate %s: %d, want a non-negative estimate", f.name, got)
		}
		t.Logf("estimate %s: %d (exact %d)", f.name, got, s.count(t, TableItems, f.where))
	}
	ctx, cancel := ctxT()
	defer cancel()
	_, err := est.Estimate(ctx, s.readPlan("conf_missing", nil))
	wantKind(t, "Estimate of a missing table", err, fault.NotFound)
}

// testOrFilters reads conf_items with nested or/and/not trees, as the
// REST face's or=(…,and(…)) parses them, and compares the names found.
func (s *suite) testOrFilters(t *testing.T) {
	n := func(v float64) any { return num(s.numKind, v) }
	tests := []struct {
		name  string
		where query.Expr
		want  []string
	}{
		{"or of and of or", query.Or{cond("name", query.Eq, "bob"),
			query.And{cond("qty", query.Ge, n(30)), query.Or{cond("note", query.ILike, "%example.com"), cond("ratio", query.Lt, 0.0)}}},
			[]string{"Ann", "Cy_1", "bob"}},
		{"and of ors with null tests", query.And{
			query.Or{cond("qty", query.IsNull), cond("qty", query.Lt, n(20))},
			query.Or{cond("name", query.Like, "Dee%"), cond("note", query.IsNotNull)}},
			[]string{"Dee 100%", "ann"}},
		{"or of ands, NULL under not", query.Or{
			query.And{cond("name", query.Like, "%e%"), query.Not{X: cond("qty", query.Eq, n(25))}},
			query.And{cond("name", query.In, "Ann", "ann"), cond("ratio", query.Gt, 0.0)}},
			[]string{"Ann"}},
		{"not of or of and", query.Not{X: query.Or{cond("qty", query.Gt, n(25)),
			query.And{cond("ratio", query.Le, 7.0), cond("ratio", query.Ge, 6.5)}}},
			[]string{"ann"}},
		{"four levels", query.And{
			query.Or{
				query.And{query.Or{cond("name", query.Eq, "Ann"), cond("name", query.Eq, "eve")}, cond("qty", query.Ge, n(25))},
				cond("name", query.Eq, "Cy_1")},
			cond("ratio", query.IsNotNull)},
			[]string{"Ann", "Cy_1", "eve"}},
		{"single-item trees", query.Or{query.And{cond("name", query.Eq, "bob")}, query.Or{query.Or{cond("name", query.Eq, "ann")}}},
			[]string{"ann", "bob"}},
		{"or with between and nin", query.Or{cond("ratio", query.Between, 8.0, 9.0),
			query.And{cond("qty", query.NotIn, n(25), n(30), n(40)), cond("ratio", query.Lt, 0.0)}},
			[]string{"Cy_1", "ann"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if got := s.names(t, TableItems, tt.where); !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
			if got := s.exactCount(t, tt.where); got != len(want) {
				t.Errorf("count() of the same tree: %d, want %d", got, len(want))
			}
		})
	}
}

// testAggregates checks count, sum, avg, min and max over the seed rows,
// whole, filtered by a tree, grouped (ordered, paged and with having):
// the same figures on every dialect.
func (s *suite) testAggregates(t *testing.T) {
	n := func(v float64) any { return num(s.numKind, v) }
	nan := math.NaN()
	check := func(what string, p *query.Plan, want [][]float64) {
		t.Helper()
		cols, rows := readAll(t, s.src, p)
		wantCols := append(slices.Clone(p.GroupBy), make([]string, 0, len(p.Aggregates))...)
		for _, a := range p.Aggregates {
			wantCols = append(wantCols, a.Alias)
		}
		if len(cols) != len(wantCols) {
			t.Fatalf("%s: %d result columns, want %v", what, len(cols), wantCols)
		}
		for i, c := range cols {
			if c.Name != wantCols[i] {
				t.Errorf("%s: result column %d is %q, want %q", what, i, c.Name, wantCols[i])
			}
		}
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows %v, want %d", what, len(rows), rows, len(want))
		}
		for r, row := range rows {
			for i, v := range row {
				if got := figure(t, v); !sameFigure(got, want[r][i]) {
					t.Errorf("%s: row %d %s = %v (%T), want %v", what, r, wantCols[i], v, v, want[r][i])
				}
			}
		}
	}
	check("whole table", s.aggRead(nil, nil,
		agg(query.AggCount, "", "n"), agg(query.AggCount, "qty", "n_qty"),
		agg(query.AggSum, "qty", "sum_qty"), agg(query.AggAvg, "qty", "avg_qty"),
		agg(query.AggMin, "qty", "min_qty"), agg(query.AggMax, "qty", "max_qty"),
		agg(query.AggSum, "ratio", "sum_ratio"), agg(query.AggMin, "ratio", "min_ratio"), agg(query.AggMax, "ratio", "max_ratio")),
		[][]float64{{6, 5, 130, 26, 10, 40, 29.75, -1.5, 9.5}})
	check("filtered by a tree", s.aggRead(query.Or{cond("name", query.Eq, "bob"), query.And{cond("qty", query.Gt, n(25)), cond("ratio", query.IsNotNull)}}, nil,
		agg(query.AggCount, "", "n"), agg(query.AggSum, "qty", "total")),
		[][]float64{{3, 95}})
	check("matching nothing", s.aggRead(cond("name", query.Eq, "none"), nil,
		agg(query.AggCount, "", "n"), agg(query.AggSum, "qty", "total"), agg(query.AggMax, "ratio", "top")),
		[][]float64{{0, nan, nan}})

	grouped := s.aggRead(cond("ratio", query.IsNotNull), []string{"qty"},
		agg(query.AggCount, "", "n"), agg(query.AggSum, "ratio", "sum_ratio"), agg(query.AggAvg, "ratio", "avg_ratio"),
		agg(query.AggMin, "ratio", "min_ratio"), agg(query.AggMax, "ratio", "max_ratio"))
	grouped.Order = []query.Order{{Column: "qty"}}
	check("grouped and ordered", grouped, [][]float64{
		{10, 1, -1.5, -1.5, -1.5, -1.5},
		{25, 2, 13.5, 6.75, 6.5, 7},
		{30, 1, 9.5, 9.5, 9.5, 9.5},
		{40, 1, 8.25, 8.25, 8.25, 8.25},
	})
	paged := s.aggRead(cond("qty", query.IsNotNull), []string{"qty"}, agg(query.AggCount, "", "n"))
	paged.Order = []query.Order{{Column: "n", Desc: true}, {Column: "qty", Desc: true}}
	paged.Limit, paged.Offset = 2, 0
	check("ordered by an aggregate and paged", paged, [][]float64{{25, 2}, {40, 1}})
	having := s.aggRead(nil, []string{"qty"}, agg(query.AggCount, "", "n"), agg(query.AggSum, "ratio", "total"))
	having.Having = query.Or{cond("n", query.Gt, int64(1)), cond("qty", query.Eq, n(40))}
	having.Order = []query.Order{{Column: "qty"}}
	check("having", having, [][]float64{{25, 2, 13.5}, {40, 1, 8.25}})
}

// upsertPlan is an insert into conf_writes of (name, qty) rows resolved on
// the unique name.
func (s *suite) upsertPlan(resolution string, where query.Expr, rows ...[]any) *query.Plan {
	p := s.insertWrites([]string{"name", "qty"}, rows...)
	p.OnConflict, p.Resolution, p.Where = []string{"name"}, resolution, where
	return p
}

// qtys reads conf_writes as name → qty (as a figure).
func (s *suite) qtys(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, w := range s.writesState(t) {
		out[name] = figure(t, w.qty)
	}
	return out
}

func (s *suite) wantQtys(t *testing.T, what string, want map[string]float64) {
	t.Helper()
	got := s.qtys(t)
	bad := len(got) != len(want)
	for k, v := range want {
		if g, ok := got[k]; !ok || !sameFigure(g, v) {
			bad = true
		}
	}
	if bad {
		t.Errorf("%s: conf_writes holds %v, want %v", what, got, want)
	}
}

// returnedNames are the names of the rows a write returned, sorted.
func returnedNames(t *testing.T, res dialects.WriteResult) []string {
	t.Helper()
	col := slices.IndexFunc(res.Columns, func(c dialects.Column) bool { return c.Name == "name" })
	if col < 0 {
		t.Fatalf("the returned columns %v have no name", res.Columns)
	}
	var out []string
	for _, r := range res.Returned {
		out = append(out, nameOf(t, r[col]))
	}
	slices.Sort(out)
	return out
}

// testUpsert resolves duplicates of conf_writes.name: merge updates the
// existing row and inserts the new one, ignore keeps the existing row, a
// merge limited by a Where leaves the rows outside it as they are. A lack
// declared must be what the source does: Unsupported, nothing written.
func (s *suite) testUpsert(t *testing.T) {
	s.clearWrites(t)
	defer s.clearWrites(t)
	n := func(v float64) any { return num(s.numKind, v) }
	s.write(t, s.insertWrites([]string{"name", "qty"}, []any{"u1", 1.0}, []any{"u2", 2.0}))
	start := map[string]float64{"u1": 1, "u2": 2}

	merge := s.upsertPlan(query.ResolveMerge, nil, []any{"u1", 10.0}, []any{"u3", 30.0})
	if s.h.Lacks.Upsert != "" {
		for _, p := range []*query.Plan{merge, s.upsertPlan(query.ResolveIgnore, nil, []any{"u1", 10.0}, []any{"u3", 30.0})} {
			wantKind(t, "upsert ("+p.Resolution+") under Lacks.Upsert", s.writeErr(p), fault.Unsupported)
		}
		s.wantQtys(t, "after the refused upserts", start)
		s.notTested(t, "upserts", "Upsert", s.h.Lacks.Upsert)
		return
	}
	res := s.write(t, merge)
	s.wantQtys(t, "after a merge", map[string]float64{"u1": 10, "u2": 2, "u3": 30})
	if s.h.Lacks.ReturningInsert == "" {
		if got := returnedNames(t, res); !slices.Contains(got, "u3") || slices.ContainsFunc(got, func(n string) bool { return n != "u1" && n != "u3" }) {
			t.Errorf("merge returned %q: want the inserted u3 (and the merged u1), nothing else", got)
		}
	}

	res = s.write(t, s.upsertPlan(query.ResolveIgnore, nil, []any{"u1", 99.0}, []any{"u4", 40.0}))
	s.wantQtys(t, "after an ignore", map[string]float64{"u1": 10, "u2": 2, "u3": 30, "u4": 40})
	if s.h.Lacks.ReturningInsert == "" {
		// The inserted row, and on some engines (MariaDB's ON DUPLICATE
		// KEY UPDATE … RETURNING) the kept row as it is, never as sent.
		got := returnedNames(t, res)
		if !slices.Contains(got, "u4") || slices.ContainsFunc(got, func(n string) bool { return n != "u1" && n != "u4" }) {
			t.Errorf("ignore returned %q, want [u4] (and perhaps the kept u1)", got)
		}
		if q := slices.IndexFunc(res.Columns, func(c dialects.Column) bool { return c.Name == "qty" }); q >= 0 {
			for _, r := range res.Returned {
				if r[slices.IndexFunc(res.Columns, func(c dialects.Column) bool { return c.Name == "name" })] == "u1" && !sameFigure(figure(t, r[q]), 10) {
					t.Errorf("ignore returned the kept u1 with qty %v, want its kept 10", r[q])
				}
			}
		}
		t.Logf("ignore returned %q", got)
	}

	// A row scope: only rows with qty < 5 may be merged into (u2), u1 is
	// outside it and stays.
	scoped := s.upsertPlan(query.ResolveMerge, cond("qty", query.Lt, n(5)), []any{"u1", 11.0}, []any{"u2", 22.0})
	if s.h.Lacks.ScopedUpsert != "" {
		wantKind(t, "scoped merge under Lacks.ScopedUpsert", s.writeErr(scoped), fault.Unsupported)
		s.wantQtys(t, "after the refused scoped merge", map[string]float64{"u1": 10, "u2": 2, "u3": 30, "u4": 40})
		s.notTested(t, "merges limited by a row scope", "ScopedUpsert", s.h.Lacks.ScopedUpsert)
		return
	}
	s.write(t, scoped)
	s.wantQtys(t, "after a scoped merge", map[string]float64{"u1": 10, "u2": 22, "u3": 30, "u4": 40})
}

// testReturnRows updates and deletes conf_writes rows asking for them
// back (query.Plan.Return): the rows affected, only the columns the plan
// names, the values after an update and before a delete. A lack declared
// must be what the source does: Unsupported, nothing changed.
func (s *suite) testReturnRows(t *testing.T) {
	s.clearWrites(t)
	defer s.clearWrites(t)
	n := func(v float64) any { return num(s.numKind, v) }
	s.write(t, s.insertWrites([]string{"name", "qty"}, []any{"r1", 1.0}, []any{"r2", 2.0}, []any{"r3", 3.0}))
	start := map[string]float64{"r1": 1, "r2": 2, "r3": 3}

	up := s.writePlan(query.Update, TableWrites)
	up.Where = query.Or{cond("name", query.Eq, "r1"), cond("qty", query.Eq, n(2))}
	up.Set = []query.Assign{{Column: "qty", Value: n(20)}}
	up.Return, up.Columns = true, []string{"name", "qty"}
	if s.h.Lacks.ReturnUpdate != "" {
		wantKind(t, "update return=rows under Lacks.ReturnUpdate", s.writeErr(up), fault.Unsupported)
		s.wantQtys(t, "after the refused update", start)
		s.notTested(t, "rows returned by an update", "ReturnUpdate", s.h.Lacks.ReturnUpdate)
	} else {
		res := s.write(t, up)
		if res.RowsAffected != 2 {
			t.Errorf("update: RowsAffected %d, want 2", res.RowsAffected)
		}
		s.checkReturnedRows(t, "update", res, up.Columns, map[string]float64{"r1": 20, "r2": 20})
		s.wantQtys(t, "after the update", map[string]float64{"r1": 20, "r2": 20, "r3": 3})
		start = map[string]float64{"r1": 20, "r2": 20, "r3": 3}
		// Matching nothing returns no rows.
		none := *up
		none.Where = cond("name", query.Eq, "nope")
		if res := s.write(t, &none); res.RowsAffected != 0 || len(res.Returned) != 0 {
			t.Errorf("update matching nothing: RowsAffected %d, %d rows returned", res.RowsAffected, len(res.Returned))
		}
	}

	del := s.writePlan(query.Delete, TableWrites)
	del.Where = cond("name", query.In, "r3", "nope")
	del.Return, del.Columns = true, []string{"qty", "name"}
	if s.h.Lacks.ReturnDelete != "" {
		wantKind(t, "delete return=rows under Lacks.ReturnDelete", s.writeErr(del), fault.Unsupported)
		s.wantQtys(t, "after the refused delete", start)
		s.notTested(t, "rows returned by a delete", "ReturnDelete", s.h.Lacks.ReturnDelete)
		return
	}
	res := s.write(t, del)
	if res.RowsAffected != 1 {
		t.Errorf("delete: RowsAffected %d, want 1", res.RowsAffected)
	}
	s.checkReturnedRows(t, "delete", res, del.Columns, map[string]float64{"r3": 3})
	delete(start, "r3")
	s.wantQtys(t, "after the delete", start)
}

// checkReturnedRows checks that a write returned exactly the columns cols,
// in order, and one row per name in want with its qty.
func (s *suite) checkReturnedRows(t *testing.T, what string, res dialects.WriteResult, cols []string, want map[string]float64) {
	t.Helper()
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, cols) {
		t.Fatalf("%s returned the columns %v, want %v (only the columns asked for)", what, names, cols)
	}
	qty := slices.Index(cols, "qty")
	got := map[string]float64{}
	for _, r := range res.Returned {
		if len(r) != len(cols) {
			t.Fatalf("%s returned a row of %d values for %d columns", what, len(r), len(cols))
		}
		got[nameOf(t, r[slices.Index(cols, "name")])] = figure(t, r[qty])
	}
	if len(got) != len(want) || len(res.Returned) != len(want) {
		t.Errorf("%s returned %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || !sameFigure(g, v) {
			t.Errorf("%s returned %v, want %v", what, got, want)
			return
		}
	}
}
