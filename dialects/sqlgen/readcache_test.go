package sqlgen

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// renderFresh renders a read as Render did before texts were kept.
func renderFresh(s *Syntax, p *query.Plan) (dialects.Stmt, error) {
	var b Builder
	b.Init(s, nil)
	b.Read(p)
	return b.Stmt()
}

// forgetReads empties the kept texts.
func forgetReads() {
	readTexts.mu.Lock()
	readTexts.m = nil
	readTexts.mu.Unlock()
}

// keptSyntaxes are syntaxes that differ in one field each from the first.
func keptSyntaxes() []*Syntax {
	base := func(edit func(s *Syntax)) *Syntax {
		s := &Syntax{Placeholder: "?", QuoteOpen: '"', QuoteClose: '"', QuoteEscape: '"', True: "T", False: "F"}
		if edit != nil {
			edit(s)
		}
		return s
	}
	return []*Syntax{
		base(nil),
		base(func(s *Syntax) { s.Numbered = true }),
		base(func(s *Syntax) { s.Placeholder = "$" }),
		base(func(s *Syntax) { s.Placeholder, s.Numbered = "@p", true }),
		base(func(s *Syntax) { s.QuoteOpen = '[' }),
		base(func(s *Syntax) { s.QuoteClose = ']' }),
		base(func(s *Syntax) { s.QuoteEscape = '\\' }),
		base(func(s *Syntax) { s.NullsLargest = true }),
		base(func(s *Syntax) { s.OffsetFetch = true }),
		base(func(s *Syntax) { s.NoLimit = "ALL" }),
		base(func(s *Syntax) { s.NoLimit = "18446744073709551615" }),
		base(func(s *Syntax) { s.NoLimitArg = int64(-1) }),
		base(func(s *Syntax) { s.NoLimitArg = int64(99) }),
	}
}

// keptPlans are reads that differ from the first in one part each: every
// part of a plain read's key, and values that are bound, not written.
func keptPlans() []*query.Plan {
	base := func(edit func(p *query.Plan)) *query.Plan {
		p := &query.Plan{Action: query.Read, Schema: "s", Table: "t", Columns: []string{"a", "b"},
			Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(7)}}, Limit: 1}
		if edit != nil {
			edit(p)
		}
		return p
	}
	var out []*query.Plan
	out = append(out,
		base(nil),
		base(func(p *query.Plan) { p.Schema = "" }),
		base(func(p *query.Plan) { p.Schema = "s2" }),
		base(func(p *query.Plan) { p.Schema, p.Table = "", "s.t" }),
		base(func(p *query.Plan) { p.Table = "u" }),
		base(func(p *query.Plan) { p.Table = `t"q` }),
		base(func(p *query.Plan) { p.Columns = nil }),
		base(func(p *query.Plan) { p.Columns = []string{"a"} }),
		base(func(p *query.Plan) { p.Columns = []string{"b", "a"} }),
		base(func(p *query.Plan) { p.Columns = []string{"ab"} }),
		base(func(p *query.Plan) { p.Columns = []string{"a", "b", "c"} }),
		base(func(p *query.Plan) { p.Columns = []string{"a]", `b"`} }),
		base(func(p *query.Plan) { p.Where = nil }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "a", Op: query.Eq, Args: []any{int64(7)}} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{"x"}} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{nil}} }),
		base(func(p *query.Plan) { p.Order = []query.Order{{Column: "a"}} }),
		base(func(p *query.Plan) { p.Order = []query.Order{{Column: "a", Desc: true}} }),
		base(func(p *query.Plan) { p.Order = []query.Order{{Column: "b"}} }),
		base(func(p *query.Plan) { p.Order = []query.Order{{Column: "a"}, {Column: "b", Desc: true}} }),
		base(func(p *query.Plan) { p.Limit = 0 }),
		base(func(p *query.Plan) { p.Limit = 100 }),
		base(func(p *query.Plan) { p.Offset = 3 }),
		base(func(p *query.Plan) { p.Limit, p.Offset = 0, 3 }),
		base(func(p *query.Plan) { p.Limit, p.Offset = 100, 300 }),
		base(func(p *query.Plan) { p.Where, p.Limit, p.Offset = nil, 0, 0 }),
		// Plans of no kept shape, rendered as ever.
		base(func(p *query.Plan) { p.Limit = -1 }),
		base(func(p *query.Plan) { p.Offset = -1 }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.Eq} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{1, 2}} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.Eq, Args: []any{query.Default{}}} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.In, Args: []any{1}} }),
		base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: query.IsNull} }),
		base(func(p *query.Plan) { p.Where = query.Not{X: &query.Cond{Column: "id", Op: query.Eq, Args: []any{1}}} }),
		base(func(p *query.Plan) { p.Where = query.And{&query.Cond{Column: "id", Op: query.Eq, Args: []any{1}}} }),
		base(func(p *query.Plan) { p.Columns = []string{""} }),
		base(func(p *query.Plan) { p.Table = "t\x00" }),
		base(func(p *query.Plan) { p.Aggregates = []query.Aggregate{{Func: query.AggCount, Alias: "n"}} }),
	)
	for _, op := range []query.Op{query.Ne, query.Gt, query.Ge, query.Lt, query.Le} {
		out = append(out, base(func(p *query.Plan) { p.Where = &query.Cond{Column: "id", Op: op, Args: []any{int64(7)}} }))
	}
	return out
}

// sameStmt reports a difference between a render and the fresh one.
func sameStmt(t *testing.T, what string, st dialects.Stmt, err error, want dialects.Stmt, wantErr error) {
	t.Helper()
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Errorf("%s: error %v, fresh render's %v", what, err, wantErr)
		return
	}
	if st.SQL != want.SQL || !reflect.DeepEqual(st.Args, want.Args) {
		t.Errorf("%s:\ngot   %s %#v\nfresh %s %#v", what, st.SQL, st.Args, want.SQL, want.Args)
	}
}

// TestReadTextKept renders every plan in every syntax, each differing from
// another in one part of the key, twice over: the second round is served
// from the kept texts and must give the fresh render's statement, error
// included. A part of the text left out of the key makes two of them share
// a text, and one of them wrong.
func TestReadTextKept(t *testing.T) {
	forgetReads()
	defer forgetReads()
	syntaxes, plans := keptSyntaxes(), keptPlans()
	for round := range 2 {
		for i, s := range syntaxes {
			for j, p := range plans {
				st, err := s.Render(p)
				want, wantErr := renderFresh(s, p)
				sameStmt(t, fmt.Sprintf("round %d, syntax %d, plan %d", round, i, j), st, err, want, wantErr)
			}
		}
	}
	readTexts.mu.RLock()
	kept := len(readTexts.m)
	readTexts.mu.RUnlock()
	if kept == 0 {
		t.Fatal("no read text was kept")
	}
}

// TestReadTextValues: reads of one kept text bind their own values.
func TestReadTextValues(t *testing.T) {
	forgetReads()
	defer forgetReads()
	s := &Syntax{Placeholder: "$", Numbered: true, QuoteOpen: '"', QuoteClose: '"', QuoteEscape: '"', NoLimitArg: int64(-1)}
	for i := range 3 {
		for _, p := range []*query.Plan{
			{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(i)}}, Limit: int64(i + 1)},
			{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{fmt.Sprint(i)}}, Limit: int64(i + 1), Offset: int64(10 * (i + 1))},
			{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(i)}}, Offset: int64(i + 1)},
		} {
			st, err := s.Render(p)
			want, wantErr := renderFresh(s, p)
			sameStmt(t, fmt.Sprintf("value %d", i), st, err, want, wantErr)
		}
	}
	// A DEFAULT where a value belongs is refused from a kept text too.
	p := &query.Plan{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: &query.Cond{Column: "id", Op: query.Eq, Args: []any{query.Default{}}}, Limit: 1}
	if _, err := s.Render(p); fault.KindOf(err) != fault.Invalid {
		t.Errorf("DEFAULT bound from a kept text: %v", err)
	}
}

// TestReadTextChecksIdents: a syntax alike another but for CheckIdent
// refuses what the other's kept text holds.
func TestReadTextChecksIdents(t *testing.T) {
	forgetReads()
	defer forgetReads()
	loose := &Syntax{Placeholder: "?", QuoteOpen: '"', QuoteClose: '"', QuoteEscape: '"'}
	strict := *loose
	strict.CheckIdent = func(name string) error {
		if len(name) > 3 {
			return fault.New(fault.Invalid, "identifier %q is too long", name)
		}
		return CheckIdent(name)
	}
	for _, p := range []*query.Plan{
		{Action: query.Read, Table: "long", Columns: []string{"a"}, Limit: 1},
		{Action: query.Read, Schema: "long", Table: "t", Columns: []string{"a"}, Limit: 1},
		{Action: query.Read, Table: "t", Columns: []string{"a", "long"}, Limit: 1},
		{Action: query.Read, Table: "t", Columns: []string{"a"}, Where: &query.Cond{Column: "long", Op: query.Eq, Args: []any{1}}, Limit: 1},
		{Action: query.Read, Table: "t", Columns: []string{"a"}, Order: []query.Order{{Column: "long"}}, Limit: 1},
	} {
		if _, err := loose.Render(p); err != nil {
			t.Fatal(err)
		}
		st, err := strict.Render(p)
		want, wantErr := renderFresh(&strict, p)
		sameStmt(t, "strict after loose", st, err, want, wantErr)
		if err == nil {
			t.Errorf("%+v: the strict syntax took a name it refuses", p)
		}
	}
}

// TestReadKeyFields classifies every field of Syntax and of query.Plan as
// part of a kept read's key or not: a field added to either fails here
// until it is placed (and, if a plain read's text depends on it, added to
// readKey and to keptSyntaxes or keptPlans).
func TestReadKeyFields(t *testing.T) {
	syntax := map[string]bool{
		// In the key.
		"Placeholder": true, "Numbered": true, "QuoteOpen": true, "QuoteClose": true, "QuoteEscape": true,
		"NullsLargest": true, "OffsetFetch": true, "NoLimit": true, "NoLimitArg": true,
		// Checked on every read (identsPass), so its verdict is never kept.
		"CheckIdent": false,
		// Conditions other than one comparison (not kept), or bound values.
		"True": false, "False": false, "BitBooleans": false, "ILike": false, "LikeTail": false, "LikeArg": false, "PushNot": false,
		// Writes and aggregates.
		"NullKeyword": false, "Output": false, "Returning": false, "DefaultValues": false, "OmitDefaultColumns": false,
		"Engine": false, "Upsert": false, "WriteReturning": false, "DeleteReturning": false, "Mutations": false,
		"CountRows": false, "AvgTail": false, "MaxRows": false,
		// Checked on the finished statement, kept text or not (stmt).
		"MaxArgs": false, "Verify": false,
	}
	plan := map[string]bool{
		// In the key.
		"Schema": true, "Table": true, "Columns": true, "Where": true, "Order": true, "Limit": true, "Offset": true,
		// Read by the engine, not by Builder.Read.
		"Action": false, "Org": false, "Project": false, "Type": false, "Count": false,
		"Doc": false, "DocKeys": false,
		// Aggregate reads are never kept (IsAggregate).
		"Aggregates": false, "GroupBy": false, "Having": false,
		// Writes.
		"Records": false, "Rows": false, "IDs": false, "Set": false, "All": false, "OnConflict": false,
		"Resolution": false, "Return": false, "Docs": false, "DocReplace": false,
	}
	for typ, known := range map[reflect.Type]map[string]bool{reflect.TypeFor[Syntax](): syntax, reflect.TypeFor[query.Plan](): plan} {
		for i := range typ.NumField() {
			if f := typ.Field(i); !hasKey(known, f.Name) {
				t.Errorf("%s.%s: is it part of a plain read's text? Place it in readKey or here", typ.Name(), f.Name)
			}
		}
	}
}

func hasKey(m map[string]bool, k string) bool {
	_, ok := m[k]
	return ok
}

// TestReadTextConcurrent renders kept and new texts from many goroutines
// (run with -race), each checked against the fresh render.
func TestReadTextConcurrent(t *testing.T) {
	forgetReads()
	defer forgetReads()
	syntaxes, plans := keptSyntaxes(), keptPlans()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 300 {
				s, p := syntaxes[(g+k)%len(syntaxes)], plans[(g*7+k)%len(plans)]
				st, err := s.Render(p)
				want, wantErr := renderFresh(s, p)
				if (err == nil) != (wantErr == nil) || st.SQL != want.SQL || !reflect.DeepEqual(st.Args, want.Args) {
					t.Errorf("goroutine %d: %s %v, fresh %s %v", g, st.SQL, err, want.SQL, wantErr)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRenderRead renders the gateway's read by key (8 columns, one
// comparison, a limit) in PostgreSQL's form, kept (the cache as it runs)
// and fresh (as before it).
func BenchmarkRenderRead(b *testing.B) {
	s := &Syntax{Placeholder: "$", Numbered: true, QuoteOpen: '"', QuoteClose: '"', QuoteEscape: '"', NullsLargest: true,
		CheckIdent: func(name string) error {
			if len(name) > 63 {
				return fault.New(fault.Invalid, "identifier %q is longer than %d bytes", name, 63)
			}
			return CheckIdent(name)
		}}
	p := &query.Plan{Action: query.Read, Schema: "minimal_bench", Table: "items",
		Columns: []string{"id", "name", "price", "qty", "active", "created", "note", "grp"},
		Where:   &query.Cond{Column: "id", Op: query.Eq, Args: []any{int64(7)}}, Limit: 1}
	b.Run("kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Render(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := renderFresh(s, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
