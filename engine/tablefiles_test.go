package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

// AggregateTables alone: a database type "fa" whose source is the fake
// table with the TableAggregates capability, two tables of it, and roles
// that read them whole, through a column list, or under a row scope.

const aggType = "fa"

// aggSource answers every aggregate with one row and counts the calls
// that reached it.
type aggSource struct {
	*fakeSource
	mu    sync.Mutex
	calls int
}

func (a *aggSource) AggregateTables(_ context.Context, tables []dialects.SourceTable, _ dialects.TableAggregate) ([][]any, error) {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	return [][]any{{int64(len(tables))}}, nil
}

func (a *aggSource) reached() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.calls
	a.calls = 0
	return n > 0
}

var (
	aggOnce sync.Once
	aggSrc  = &aggSource{fakeSource: &fakeSource{}}
)

// TestAggregateTablesRefusesNarrowedReads: the statement reads every
// source's stored rows whole, so a read right narrowed by a row scope or
// a column list on any one source is refused before the source is
// reached, the refusal counted by its gate and audited once, as a read of
// all the sources' objects; a whole read on every source runs and is
// audited with the rows answered.
func TestAggregateTablesRefusesNarrowedReads(t *testing.T) {
	aggOnce.Do(func() {
		dialects.Register(aggType, func(context.Context, dialects.Config) (dialects.Source, error) { return aggSrc, nil })
	})
	one, two := aggType+"/s/one", aggType+"/s/two"
	reg := &oneDBRegistry{db: store.Database{ID: "d3", ProjectID: "p1", Type: aggType, Schema: "s"}, registry: &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "all", Rules: []store.Rule{{Object: aggType + "/s/*", Actions: []string{"read"}}}},
			{Name: "two-cols", Rules: []store.Rule{{Object: one, Actions: []string{"read"}},
				{Object: two, Actions: []string{"read"}, Columns: []string{"id", "owner"}}}},
		},
		Bindings: []store.Binding{
			{Role: "reader", Templates: []string{"all"}},
			{Role: "cols", Templates: []string{"two-cols"}},
			{Role: "scoped", Templates: []string{"all"}},
		},
		Scopes: []store.Scope{{Role: "scoped", Object: two, Filter: "dept=eq.{claims.dept}"}},
	}}}
	e, audit, gates := newTestEngine(t, reg)
	who := func(roles ...string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p",
			Roles: roles, KeyType: query.MaskAll, Claims: map[string]any{"dept": "6"}}
	}
	refs := []engine.TableRef{{Type: aggType, Schema: "s", Table: "one"}, {Type: aggType, Schema: "s", Table: "two"}}
	object := one + "," + two

	cases := []struct {
		name    string
		p       *auth.Principal
		refs    []engine.TableRef
		kind    fault.Kind // 0: success
		gate    engine.RefusalGate
		reached bool
		rows    int64
		outcome string
	}{
		{"every source read whole", who("reader"), refs, 0, "", true, 1, "ok"},
		{"a column list on the second source", who("cols"), refs, fault.Forbidden, engine.GateTemplate, false, 0, "FORBIDDEN"},
		{"a row scope on the second source", who("scoped"), refs, fault.Forbidden, engine.GateScope, false, 0, "FORBIDDEN"},
		{"no read right at all", who(), refs, fault.Forbidden, engine.GateTemplate, false, 0, "FORBIDDEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			audit.take()
			gates.take()
			aggSrc.reached()
			rows, err := e.AggregateTables(t.Context(), c.p, c.refs, dialects.TableAggregate{Func: query.AggCount})
			if c.kind == 0 && err != nil || c.kind != 0 && fault.KindOf(err) != c.kind {
				t.Fatalf("got %v (%s), want %s", err, fault.KindOf(err), c.kind)
			}
			var ar *engine.ActionRefused
			if c.kind != 0 && (!errors.As(err, &ar) || ar.Action != store.ActionRead) {
				t.Fatalf("refusal %v, want the read right named", err)
			}
			if got := gates.take(); c.gate == "" && len(got) != 0 || c.gate != "" && (len(got) != 1 || got[0] != c.gate) {
				t.Fatalf("refusals counted %v, want %q", got, c.gate)
			}
			if got := aggSrc.reached(); got != c.reached {
				t.Fatalf("the source was reached: %v, want %v", got, c.reached)
			}
			if c.kind == 0 && len(rows) != 1 {
				t.Fatalf("rows %v", rows)
			}
			entries := audit.take()
			if len(entries) != 1 || entries[0].Object != object || entries[0].Action != "read" || entries[0].Outcome != c.outcome || entries[0].Rows != c.rows {
				t.Fatalf("audit %+v, want one read of %s with outcome %s and %d rows", entries, object, c.outcome, c.rows)
			}
		})
	}
}
