package store

import (
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// The renames and deletes the admin API needs, on both backends.

func TestAdminTenancy(t *testing.T) { eachBackend(t, testAdminTenancy) }

func testAdminTenancy(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	o, p, sp := tenant(t, s, "acme")
	other, _, _ := tenant(t, s, "other")

	seq := must[int64](t)(s.ChangeSeq(ctx))
	renamed := must[Org](t)(s.RenameOrg(ctx, o.ID, "Acme Inc"))
	if renamed.Name != "Acme Inc" || renamed.Abbr != "acme" || !renamed.CreatedAt.Equal(o.CreatedAt) {
		t.Fatalf("renamed org: %+v", renamed)
	}
	if after := must[int64](t)(s.ChangeSeq(ctx)); after <= seq {
		t.Fatal("rename did not move the change counter")
	}
	_, err := s.RenameOrg(ctx, o.ID, other.Name)
	wantKind(t, err, fault.Conflict)
	_, err = s.RenameOrg(ctx, o.ID, " padded")
	wantKind(t, err, fault.Invalid)
	_, err = s.RenameOrg(ctx, "nosuch", "X")
	wantKind(t, err, fault.NotFound)
	must[Org](t)(s.RenameOrg(ctx, o.ID, "Acme Inc")) // same name: not a conflict with itself

	p2 := must[Project](t)(s.CreateProject(ctx, o.ID, "Second", "second"))
	rp := must[Project](t)(s.RenameProject(ctx, p2.ID, "Second 2"))
	if rp.Name != "Second 2" || rp.Abbr != "second" || rp.OrgID != o.ID {
		t.Fatalf("renamed project: %+v", rp)
	}
	_, err = s.RenameProject(ctx, p2.ID, p.Name)
	wantKind(t, err, fault.Conflict)
	_, err = s.RenameProject(ctx, "nosuch", "X")
	wantKind(t, err, fault.NotFound)

	// An org with projects stays.
	wantKind(t, s.DeleteOrg(ctx, o.ID), fault.Conflict)
	wantKind(t, s.DeleteOrg(ctx, "nosuch"), fault.NotFound)

	// A project with an identity or a database stays; without, it goes with
	// its spaces and policy.
	id := must[Identity](t)(s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "alice", Kind: KindUser, KeyType: "crud", Enabled: true}))
	wantKind(t, s.DeleteProject(ctx, p.ID), fault.Conflict)
	wantKind(t, s.DeleteSpace(ctx, sp.ID), fault.Conflict)
	noErr(t, s.DeleteIdentity(ctx, id.ID))
	wantKind(t, s.DeleteIdentity(ctx, id.ID), fault.NotFound)
	must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: "postgres://u:p@h/db"}))
	wantKind(t, s.DeleteProject(ctx, p.ID), fault.Conflict)
	noErr(t, s.RemoveDatabase(ctx, p.ID, "pg", "public"))
	if err := s.ReplacePolicy(ctx, p.ID, Policy{
		Templates: []Template{{Name: "t", Rules: []Rule{{Object: "pg", Actions: []string{ActionRead}}}}},
		Bindings:  []Binding{{Role: "r", Templates: []string{"t"}}},
		Scopes:    []Scope{{Role: "r", Object: "pg", Filter: "a=eq.1"}},
		Locks:     []Lock{{Pattern: "pg", Mask: "-r--"}},
	}); err != nil {
		t.Fatal(err)
	}
	noErr(t, s.DeleteProject(ctx, p.ID))
	_, err = s.ProjectByID(ctx, p.ID)
	wantKind(t, err, fault.NotFound)
	_, err = s.SpaceByID(ctx, sp.ID)
	wantKind(t, err, fault.NotFound)
	if locks := must[[]Lock](t)(s.AllLocks(ctx)); len(locks) != 0 {
		t.Fatalf("locks left: %v", locks)
	}
	wantKind(t, s.DeleteProject(ctx, p.ID), fault.NotFound)

	// Spaces go when empty.
	sp2 := must[Space](t)(s.CreateSpace(ctx, p2.ID, "extra", true))
	noErr(t, s.DeleteSpace(ctx, sp2.ID))
	wantKind(t, s.DeleteSpace(ctx, sp2.ID), fault.NotFound)

	// The org goes once its last project has.
	noErr(t, s.DeleteProject(ctx, p2.ID))
	noErr(t, s.DeleteOrg(ctx, o.ID))
	_, err = s.OrgByID(ctx, o.ID)
	wantKind(t, err, fault.NotFound)
}

func TestAdminIdentityWithSessionsStays(t *testing.T) {
	eachBackend(t, testAdminIdentityWithSessionsStays)
}

func testAdminIdentityWithSessionsStays(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, sp := tenant(t, s, "acme")
	id := must[Identity](t)(s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "agent", Kind: KindMCP, KeyType: "crud", Enabled: true}))
	if _, err := s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "s", Context: "c", IdleTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.DeleteIdentity(ctx, id.ID), fault.Conflict)
	if _, err := s.IdentityByID(ctx, id.ID); err != nil {
		t.Fatal(err)
	}
}

func TestAdminDatabaseDSN(t *testing.T) { eachBackend(t, testAdminDatabaseDSN) }

func testAdminDatabaseDSN(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "acme")
	d := must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: "postgres://u:old@h/db"}))
	got := must[Database](t)(s.Database(ctx, p.ID, "pg", "public"))
	if got.ID != d.ID || got.DSN != "postgres://u:old@h/db" {
		t.Fatalf("Database: %+v", got)
	}
	_, err := s.Database(ctx, p.ID, "pg", "nosuch")
	wantKind(t, err, fault.NotFound)

	time.Sleep(time.Millisecond)
	up := must[Database](t)(s.SetDatabaseDSN(ctx, p.ID, "pg", "public", "postgres://u:new@h/db"))
	if up.ID != d.ID || up.DSN != "postgres://u:new@h/db" || !up.UpdatedAt.After(d.UpdatedAt) || !up.CreatedAt.Equal(d.CreatedAt) {
		t.Fatalf("SetDatabaseDSN: %+v (was %+v)", up, d)
	}
	_, err = s.SetDatabaseDSN(ctx, p.ID, "pg", "public", "")
	wantKind(t, err, fault.Invalid)
	_, err = s.SetDatabaseDSN(ctx, p.ID, "pg", "nosuch", "x")
	wantKind(t, err, fault.NotFound)
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
