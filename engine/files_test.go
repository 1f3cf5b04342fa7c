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

// The engine's file entry points alone: a database type "ff" whose source
// is the fk table with the History, Snapshots and AliasStore capabilities
// (and not SchemaChanges), its table locked for delete. Every right, refusal, capability lookup and
// audit outcome is a row of TestFileEntryPoints.

const fileType = "ff"

// fileSource adds file capabilities to the fake table; calls counts what
// reached them.
type fileSource struct {
	*fakeSource
	mu    sync.Mutex
	calls int
}

func (f *fileSource) called() {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
}

func (f *fileSource) HistoryAt(_ context.Context, table, rowID string, at int64) (dialects.HistoryEntry, error) {
	f.called()
	return dialects.HistoryEntry{Version: 1, RecordedAt: at, Op: "create", Data: `{"owner":"ann"}`}, nil
}

func (f *fileSource) Snapshot(context.Context, string, string) error { f.called(); return nil }

func (f *fileSource) CountRows(context.Context, string) (int64, error) { f.called(); return 3, nil }

func (f *fileSource) Aliases(context.Context) ([]dialects.Alias, error) {
	f.called()
	return []dialects.Alias{{Name: "a"}}, nil
}

func (f *fileSource) Alias(_ context.Context, name string) (dialects.Alias, bool, error) {
	f.called()
	return dialects.Alias{Name: name}, true, nil
}

func (f *fileSource) PutAlias(context.Context, dialects.Alias) (bool, error) {
	f.called()
	return true, nil
}

func (f *fileSource) DropAlias(context.Context, string) (bool, error) { f.called(); return true, nil }

var (
	fileOnce sync.Once
	fileSrc  = &fileSource{fakeSource: &fakeSource{}}
)

// oneDBRegistry serves one database (of a test's own type) of project p1.
type oneDBRegistry struct {
	*registry
	db store.Database
}

func (r *oneDBRegistry) Databases(context.Context) ([]store.Database, error) {
	return []store.Database{r.db}, nil
}

func TestFileEntryPoints(t *testing.T) {
	fileOnce.Do(func() {
		dialects.Register(fileType, func(context.Context, dialects.Config) (dialects.Source, error) { return fileSrc, nil })
	})
	obj := fileType + "/s/items"
	reg := &oneDBRegistry{db: store.Database{ID: "d2", ProjectID: "p1", Type: fileType, Schema: "s"}, registry: &registry{pol: store.Policy{
		Templates: []store.Template{
			{Name: "read", Rules: []store.Rule{{Object: obj, Actions: []string{"read"}, Columns: []string{"dept", "id", "owner"}}}},
			{Name: "write", Rules: []store.Rule{{Object: obj, Actions: []string{"create", "read", "update", "delete"}}}},
		},
		Bindings: []store.Binding{
			{Role: "reader", Templates: []string{"read"}},
			{Role: "writer", Templates: []string{"write"}},
			{Role: "dept", Templates: []string{"write"}},
		},
		Scopes: []store.Scope{{Role: "dept", Object: obj, Filter: "dept=eq.{claims.dept}"}},
		Locks:  []store.Lock{{Pattern: obj, Mask: "cru-"}},
	}}}
	e, audit, gates := newTestEngine(t, reg)

	ro, _ := query.ParseMask("-r--")
	wo, _ := query.ParseMask("c-ud")
	who := func(keyType query.Mask, roles ...string) *auth.Principal {
		return &auth.Principal{IdentityID: "i1", Identity: "ann", OrgID: "o1", Org: "o", ProjectID: "p1", Project: "p",
			Roles: roles, KeyType: keyType, Claims: map[string]any{"dept": "6"}}
	}
	items := engine.TableRef{Type: fileType, Schema: "s", Table: "items"}
	ctx := t.Context()
	history := func(p *auth.Principal) error { _, err := e.HistoryAt(ctx, p, items, "r1", 100); return err }
	snapshot := func(p *auth.Principal) error { return e.Snapshot(ctx, p, items, "/nowhere") }
	count := func(op engine.FileOp) func(*auth.Principal) error {
		return func(p *auth.Principal) error { _, err := e.CountRows(ctx, p, items, op); return err }
	}
	create := func(p *auth.Principal) error { return e.CreateTable(ctx, p, items, []byte("x")) }
	drop := func(p *auth.Principal) error {
		_, err := e.DropSchema(ctx, p, items, dialects.FileOptions{})
		return err
	}
	putAlias := func(p *auth.Principal) error {
		_, err := e.PutAlias(ctx, p, fileType, "s", items, dialects.Alias{Name: "a"})
		return err
	}
	listAliases := func(p *auth.Principal) error { _, err := e.Aliases(ctx, p, fileType, "s"); return err }
	batch := func(kinds ...dialects.BatchOpKind) func(*auth.Principal) error {
		return func(p *auth.Principal) error {
			run, err := e.StartBatch(ctx, p, items, kinds)
			if err != nil {
				return err
			}
			_, err = run.Run([]dialects.BatchOp{{Kind: kinds[0]}}, dialects.FileOptions{})
			return err
		}
	}

	cases := []struct {
		name    string
		p       *auth.Principal
		call    func(*auth.Principal) error
		kind    fault.Kind // 0: success
		gate    engine.RefusalGate
		refused string // the right an *engine.ActionRefused names
		reached bool   // the capability was called
		object  string // audited object; "" when not audited
		action  string
		outcome string
	}{
		{"history: read", who(query.MaskAll, "writer"), history, 0, "", "", true, obj, "read", "ok"},
		{"history: a column-limited read is enough", who(query.MaskAll, "reader"), history, 0, "", "", true, obj, "read", "ok"},
		{"history: a key_type without read", who(wo, "writer"), history, fault.Forbidden, engine.GateLock, "read", false, obj, "read", "FORBIDDEN"},
		{"history: no role", who(query.MaskAll), history, fault.Forbidden, engine.GateTemplate, "read", false, obj, "read", "FORBIDDEN"},
		{"snapshot: read on everything", who(query.MaskAll, "writer"), snapshot, 0, "", "", true, obj, "read", "ok"},
		{"snapshot: not with a column list", who(query.MaskAll, "reader"), snapshot, fault.Forbidden, engine.GateTemplate, "read", false, obj, "read", "FORBIDDEN"},
		{"snapshot: not with a row scope", who(query.MaskAll, "dept"), snapshot, fault.Forbidden, engine.GateScope, "read", false, obj, "read", "FORBIDDEN"},
		{"snapshot: a key_type without read", who(wo, "admin"), snapshot, fault.Forbidden, engine.GateLock, "read", false, obj, "read", "FORBIDDEN"},
		{"a dry run that passes is not audited", who(query.MaskAll, "writer"), count(engine.OpSnapshot), 0, "", "", true, "", "", ""},
		{"a dry run takes its op's gates", who(query.MaskAll, "admin"), count(engine.OpDrop), fault.Forbidden, engine.GateLock, "delete", false, obj, "write", "FORBIDDEN"},
		{"create: the schema action", who(query.MaskAll, "writer"), create, fault.Forbidden, engine.GateTemplate, "schema", false, obj, "write", "FORBIDDEN"},
		{"create: a -r-- key_type", who(ro, "admin"), create, fault.Forbidden, engine.GateLock, "create", false, obj, "write", "FORBIDDEN"},
		{"create: a source without the capability", who(query.MaskAll, "admin"), create, fault.Unsupported, "", "", false, obj, "write", "UNSUPPORTED"},
		{"drop: the lock", who(query.MaskAll, "admin"), drop, fault.Forbidden, engine.GateLock, "delete", false, obj, "write", "FORBIDDEN"},
		{"alias: update on its table", who(query.MaskAll, "dept"), putAlias, 0, "", "", true, obj, "write", "ok"},
		{"alias: a reader may not store one", who(query.MaskAll, "reader"), putAlias, fault.Forbidden, engine.GateTemplate, "update", false, obj, "write", "FORBIDDEN"},
		{"alias: a -r-- key_type", who(ro, "writer"), putAlias, fault.Forbidden, engine.GateLock, "update", false, obj, "write", "FORBIDDEN"},
		{"aliases: read somewhere", who(query.MaskAll, "reader"), listAliases, 0, "", "", true, fileType + "/s", "read", "ok"},
		{"aliases: no role reads none", who(query.MaskAll), listAliases, fault.Forbidden, engine.GateTemplate, "", false, fileType + "/s", "read", "FORBIDDEN"},
		{"batch: raw SQL needs the schema action", who(query.MaskAll, "writer"), batch(dialects.BatchQuery), fault.Forbidden, engine.GateTemplate, "schema", false, obj, "write", "FORBIDDEN"},
		{"batch: raw SQL under the lock", who(query.MaskAll, "admin"), batch(dialects.BatchQuery), fault.Forbidden, engine.GateLock, "delete", false, obj, "write", "FORBIDDEN"},
		{"batch: a create passes, the source cannot", who(query.MaskAll, "admin"), batch(dialects.BatchCreate), fault.Unsupported, "", "", false, obj, "write", "UNSUPPORTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			audit.take()
			gates.take()
			fileSrc.mu.Lock()
			fileSrc.calls = 0
			fileSrc.mu.Unlock()
			err := c.call(c.p)
			if c.kind == 0 && err != nil || c.kind != 0 && fault.KindOf(err) != c.kind {
				t.Fatalf("got %v (%s), want %s", err, fault.KindOf(err), c.kind)
			}
			var ar *engine.ActionRefused
			if got := errors.As(err, &ar); got != (c.refused != "") || got && ar.Action != c.refused {
				t.Fatalf("refusal %+v, want the right %q", ar, c.refused)
			}
			got := gates.take()
			if c.gate == "" && len(got) != 0 || c.gate != "" && (len(got) != 1 || got[0] != c.gate) {
				t.Fatalf("refusals counted %v, want %q", got, c.gate)
			}
			fileSrc.mu.Lock()
			reached := fileSrc.calls > 0
			fileSrc.mu.Unlock()
			if reached != c.reached {
				t.Fatalf("the capability was reached: %v, want %v", reached, c.reached)
			}
			entries := audit.take()
			if c.object == "" {
				if len(entries) != 0 {
					t.Fatalf("audited %+v", entries)
				}
				return
			}
			if len(entries) != 1 || entries[0].Object != c.object || entries[0].Action != c.action || entries[0].Outcome != c.outcome {
				t.Fatalf("audit %+v, want one %s of %s with outcome %s", entries, c.action, c.object, c.outcome)
			}
		})
	}
}
