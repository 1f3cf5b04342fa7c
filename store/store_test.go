package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/migrations"
)

// ---------------------------------------------------------------- helpers

// openStore opens a store in dir with the key file (MINIMAL_MASTER_KEY is
// cleared for the test) and closes it at cleanup.
func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newStore opens a store in a fresh temporary directory.
func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	t.Setenv(EnvMasterKey, "")
	dir := t.TempDir()
	return openStore(t, dir), dir
}

func wantKind(t *testing.T, err error, want fault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %v", want)
	}
	if got := fault.KindOf(err); got != want {
		t.Fatalf("kind = %v, want %v (err: %v)", got, want, err)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// tenant creates an org, a project and a space.
func tenant(t *testing.T, s *Store, abbr string) (Org, Project, Space) {
	t.Helper()
	ctx := t.Context()
	o := must[Org](t)(s.CreateOrg(ctx, "Org "+abbr, abbr))
	p := must[Project](t)(s.CreateProject(ctx, o.ID, "Project "+abbr, abbr))
	sp := must[Space](t)(s.CreateSpace(ctx, p.ID, "main", false))
	return o, p, sp
}

func hexKey(b byte) string { return strings.Repeat(fmt.Sprintf("%02x", b), MasterKeySize) }

// ---------------------------------------------------------------- migrations

func TestMigrationsApplyOnceAndIdempotent(t *testing.T) {
	eachBackend(t, testMigrationsApplyOnceAndIdempotent)
}

func testMigrationsApplyOnceAndIdempotent(t *testing.T) {
	t.Setenv(EnvMasterKey, "")
	dir := t.TempDir()
	ctx := t.Context()
	want := len(migrations.All())

	for round := range 3 {
		s, err := Open(ctx, dir)
		if err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if last := migrations.All()[want-1].Version; v != last {
			t.Fatalf("round %d: SchemaVersion = %d, want %d", round, v, last)
		}
		if round == 0 {
			if _, err := s.CreateOrg(ctx, "Keep", "keep"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Org(ctx, "Keep"); err != nil {
			t.Fatalf("round %d: data lost across reopen: %v", round, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	db := rawDB(t, dir)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("schema_migrations has %d rows, want %d", n, want)
	}
	var name string
	if err := db.QueryRow(`SELECT name FROM schema_migrations WHERE version = 1`).Scan(&name); err != nil || name != "init" {
		t.Fatalf("migration 1 recorded as %q (%v), want init", name, err)
	}
	if onPostgres() {
		return
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q (%v), want wal", mode, err)
	}
}

func TestConcurrentOpenOfFreshDir(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		// On SQLite several rounds: the first connections of Stores opened
		// together race to turn the new file into WAL mode, and SQLite
		// refuses one of them as busy (at once, without its busy timeout)
		// in a round out of ten or so.
		rounds := 12
		if onPostgres() {
			rounds = 1
		}
		for range rounds {
			testConcurrentOpenOfFreshDir(t)
			if t.Failed() {
				return
			}
		}
	})
}

// testConcurrentOpenOfFreshDir: eight Stores opened at once on a data
// directory that does not exist yet all open, share one master key and
// one set of migrations.
func testConcurrentOpenOfFreshDir(t *testing.T) {
	t.Setenv(EnvMasterKey, "")
	dir := filepath.Join(t.TempDir(), "data", "nested")
	ctx := t.Context()
	const n = 8
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, dir) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	// Everyone must have ended up with the same master key.
	sealed, err := stores[0].Seal([]byte("shared"))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if _, err := s.Unseal(sealed); err != nil {
			t.Fatalf("store #%d has another master key: %v", i, err)
		}
	}
	var count int
	if err := rawDB(t, dir).QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != len(migrations.All()) {
		t.Fatalf("schema_migrations has %d rows, want %d", count, len(migrations.All()))
	}
	if seq := must[int64](t)(stores[0].ChangeSeq(ctx)); seq != 0 {
		t.Fatalf("ChangeSeq = %d after concurrent opens, want 0", seq)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Fatalf("data dir mode = %o, want 700", perm)
	}
}

func TestOpenRejectsBadDir(t *testing.T) {
	t.Setenv(EnvMasterKey, "")
	for _, dir := range []string{"", filepath.Join(t.TempDir(), "a?b")} {
		if _, err := Open(t.Context(), dir); fault.KindOf(err) != fault.Invalid {
			t.Errorf("Open(%q) err = %v, want Invalid", dir, err)
		}
	}
}

// ---------------------------------------------------------------- tenancy

func TestOrgs(t *testing.T) { eachBackend(t, testOrgs) }

func testOrgs(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()

	if ok := must[bool](t)(s.Bootstrapped(ctx)); ok {
		t.Fatal("Bootstrapped on an empty store")
	}
	acme, err := s.CreateOrg(ctx, "Acme Corp", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if acme.ID == "" || acme.CreatedAt.IsZero() || acme.Name != "Acme Corp" || acme.Abbr != "acme" {
		t.Fatalf("CreateOrg returned %+v", acme)
	}
	if ok := must[bool](t)(s.Bootstrapped(ctx)); !ok {
		t.Fatal("not Bootstrapped after CreateOrg")
	}
	beta := must[Org](t)(s.CreateOrg(ctx, "Beta", "beta"))

	for name, get := range map[string]func() (Org, error){
		"Org":       func() (Org, error) { return s.Org(ctx, "Acme Corp") },
		"OrgByAbbr": func() (Org, error) { return s.OrgByAbbr(ctx, "acme") },
		"OrgByID":   func() (Org, error) { return s.OrgByID(ctx, acme.ID) },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.ID != acme.ID || got.Name != acme.Name || got.Abbr != acme.Abbr || !got.CreatedAt.Equal(acme.CreatedAt) {
			t.Fatalf("%s = %+v, want %+v", name, got, acme)
		}
	}
	list := must[[]Org](t)(s.Orgs(ctx))
	if len(list) != 2 || list[0].ID != acme.ID || list[1].ID != beta.ID {
		t.Fatalf("Orgs = %+v", list)
	}

	tests := []struct {
		name       string
		oname, abb string
		want       fault.Kind
	}{
		{"duplicate name", "Acme Corp", "other", fault.Conflict},
		{"duplicate abbr", "Other", "acme", fault.Conflict},
		{"empty name", "", "x", fault.Invalid},
		{"padded name", " Acme", "x", fault.Invalid},
		{"control char", "a\nb", "x", fault.Invalid},
		{"empty abbr", "X", "", fault.Invalid},
		{"upper abbr", "X", "Acme", fault.Invalid},
		{"abbr with slash", "X", "a/b", fault.Invalid},
		{"abbr starting with digit", "X", "1a", fault.Invalid},
		{"abbr too long", "X", strings.Repeat("a", 33), fault.Invalid},
		{"name too long", strings.Repeat("n", 129), "x", fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.CreateOrg(ctx, tt.oname, tt.abb)
			wantKind(t, err, tt.want)
		})
	}

	_, err = s.Org(ctx, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.OrgByAbbr(ctx, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.OrgByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)
}

func TestProjects(t *testing.T) { eachBackend(t, testProjects) }

func testProjects(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	a := must[Org](t)(s.CreateOrg(ctx, "A", "a"))
	b := must[Org](t)(s.CreateOrg(ctx, "B", "b"))

	p := must[Project](t)(s.CreateProject(ctx, a.ID, "Shop", "shop"))
	if p.ID == "" || p.OrgID != a.ID || p.Name != "Shop" || p.Abbr != "shop" {
		t.Fatalf("CreateProject = %+v", p)
	}
	// The same name and abbreviation in another org is fine.
	pb := must[Project](t)(s.CreateProject(ctx, b.ID, "Shop", "shop"))
	p2 := must[Project](t)(s.CreateProject(ctx, a.ID, "Admin", "adm"))

	for name, got := range map[string]Project{
		"Project":       must[Project](t)(s.Project(ctx, a.ID, "Shop")),
		"ProjectByAbbr": must[Project](t)(s.ProjectByAbbr(ctx, a.ID, "shop")),
		"ProjectByID":   must[Project](t)(s.ProjectByID(ctx, p.ID)),
	} {
		if got != p {
			t.Fatalf("%s = %+v, want %+v", name, got, p)
		}
	}
	if got := must[Project](t)(s.Project(ctx, b.ID, "Shop")); got != pb {
		t.Fatalf("Project in org b = %+v, want %+v", got, pb)
	}
	if got := must[[]Project](t)(s.Projects(ctx, a.ID)); !slices.Equal(got, []Project{p2, p}) {
		t.Fatalf("Projects = %+v", got)
	}

	tests := []struct {
		name              string
		org, pname, pabbr string
		want              fault.Kind
	}{
		{"duplicate name", a.ID, "Shop", "shop2", fault.Conflict},
		{"duplicate abbr", a.ID, "Shop 2", "shop", fault.Conflict},
		{"unknown org", "no-such-org", "X", "x", fault.NotFound},
		{"bad abbr", a.ID, "X", "X-Y", fault.Invalid},
		{"empty name", a.ID, "", "x", fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.CreateProject(ctx, tt.org, tt.pname, tt.pabbr)
			wantKind(t, err, tt.want)
		})
	}
	_, err := s.Project(ctx, a.ID, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.Project(ctx, b.ID, "Admin")
	wantKind(t, err, fault.NotFound)
	_, err = s.ProjectByAbbr(ctx, a.ID, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.ProjectByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)
}

func TestSpaces(t *testing.T) { eachBackend(t, testSpaces) }

func testSpaces(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, main := tenant(t, s, "t")
	_, other, _ := tenant(t, s, "u")

	if main.ID == "" || main.ProjectID != p.ID || main.Name != "main" || main.MCPEnabled {
		t.Fatalf("CreateSpace = %+v", main)
	}
	agents := must[Space](t)(s.CreateSpace(ctx, p.ID, "agents", true))
	if !agents.MCPEnabled {
		t.Fatal("CreateSpace(mcp=true) returned MCPEnabled=false")
	}
	if got := must[Space](t)(s.Space(ctx, p.ID, "agents")); got != agents {
		t.Fatalf("Space = %+v, want %+v", got, agents)
	}
	if got := must[Space](t)(s.SpaceByID(ctx, main.ID)); got != main {
		t.Fatalf("SpaceByID = %+v, want %+v", got, main)
	}
	if got := must[[]Space](t)(s.Spaces(ctx, p.ID)); !slices.Equal(got, []Space{agents, main}) {
		t.Fatalf("Spaces = %+v", got)
	}

	for _, on := range []bool{true, false, true} {
		if err := s.SetSpaceMCP(ctx, main.ID, on); err != nil {
			t.Fatal(err)
		}
		if got := must[Space](t)(s.SpaceByID(ctx, main.ID)); got.MCPEnabled != on {
			t.Fatalf("after SetSpaceMCP(%v) MCPEnabled = %v", on, got.MCPEnabled)
		}
	}

	_, err := s.CreateSpace(ctx, p.ID, "main", false)
	wantKind(t, err, fault.Conflict)
	_, err = s.CreateSpace(ctx, "no-such-project", "x", false)
	wantKind(t, err, fault.NotFound)
	_, err = s.CreateSpace(ctx, p.ID, "", false)
	wantKind(t, err, fault.Invalid)
	_, err = s.Space(ctx, p.ID, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.Space(ctx, other.ID, "agents")
	wantKind(t, err, fault.NotFound)
	_, err = s.SpaceByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)
	wantKind(t, s.SetSpaceMCP(ctx, "nope", true), fault.NotFound)
}

// ---------------------------------------------------------------- identities

func TestValidMask(t *testing.T) {
	tests := map[string]bool{
		"crud": true, "-r--": true, "cr--": true, "----": true, "c--d": true, "-ru-": true,
		"": false, "cru": false, "crudx": false, "rcud": false, "CRUD": false, "r---": false,
		"xxxx": false, "c r-": false, "-r-d ": false,
	}
	for m, want := range tests {
		if got := ValidMask(m); got != want {
			t.Errorf("ValidMask(%q) = %v, want %v", m, got, want)
		}
	}
}

func TestIdentities(t *testing.T) { eachBackend(t, testIdentities) }

func testIdentities(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, sp := tenant(t, s, "t")
	_, other, otherSpace := tenant(t, s, "u")

	in := Identity{
		ProjectID: p.ID, SpaceID: sp.ID, Name: "alice", Kind: KindUser,
		Roles:   []string{"hr-analyst", "reader", "hr-analyst"},
		KeyType: "cr--",
		Claims:  map[string]any{"dept_id": 7, "region": "eu"},
		Enabled: true,
	}
	alice, err := s.CreateIdentity(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if alice.ID == "" || alice.CreatedAt.IsZero() || !alice.UpdatedAt.Equal(alice.CreatedAt) {
		t.Fatalf("CreateIdentity = %+v", alice)
	}
	if !slices.Equal(alice.Roles, []string{"hr-analyst", "reader"}) {
		t.Fatalf("roles = %v, want duplicates dropped", alice.Roles)
	}
	if alice.Claims["dept_id"] != float64(7) || alice.Claims["region"] != "eu" {
		t.Fatalf("claims = %#v", alice.Claims)
	}

	same := func(name string, got, want Identity) {
		t.Helper()
		if got.ID != want.ID || got.ProjectID != want.ProjectID || got.SpaceID != want.SpaceID ||
			got.Name != want.Name || got.Kind != want.Kind || got.KeyType != want.KeyType ||
			got.Enabled != want.Enabled || !slices.Equal(got.Roles, want.Roles) ||
			fmt.Sprint(got.Claims) != fmt.Sprint(want.Claims) ||
			!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
			t.Fatalf("%s = %+v, want %+v", name, got, want)
		}
	}
	same("Identity", must[Identity](t)(s.Identity(ctx, p.ID, "alice")), alice)
	same("IdentityByID", must[Identity](t)(s.IdentityByID(ctx, alice.ID)), alice)

	bot := must[Identity](t)(s.CreateIdentity(ctx, Identity{
		ProjectID: p.ID, SpaceID: sp.ID, Name: "agent", Kind: KindMCP, KeyType: "-r--",
	}))
	if bot.Enabled || bot.Roles == nil || len(bot.Roles) != 0 || bot.Claims == nil || len(bot.Claims) != 0 {
		t.Fatalf("bare identity = %+v, want disabled with empty roles and claims", bot)
	}
	got := must[Identity](t)(s.IdentityByID(ctx, bot.ID))
	if got.Roles == nil || got.Claims == nil {
		t.Fatalf("read identity has nil roles or claims: %+v", got)
	}
	// Same name in another project is fine.
	must[Identity](t)(s.CreateIdentity(ctx, Identity{
		ProjectID: other.ID, SpaceID: otherSpace.ID, Name: "alice", Kind: KindService, KeyType: "crud",
	}))

	list := must[[]Identity](t)(s.ListIdentities(ctx, p.ID))
	if len(list) != 2 || list[0].Name != "agent" || list[1].Name != "alice" {
		t.Fatalf("ListIdentities = %+v", list)
	}
	if l := must[[]Identity](t)(s.ListIdentities(ctx, "none")); l == nil || len(l) != 0 {
		t.Fatalf("ListIdentities(unknown) = %#v, want empty", l)
	}

	// Enable / disable and roles.
	time.Sleep(time.Millisecond)
	if err := s.SetIdentityEnabled(ctx, alice.ID, false); err != nil {
		t.Fatal(err)
	}
	got = must[Identity](t)(s.IdentityByID(ctx, alice.ID))
	if got.Enabled || !got.UpdatedAt.After(alice.UpdatedAt) {
		t.Fatalf("after disable: %+v", got)
	}
	if err := s.SetIdentityEnabled(ctx, alice.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetIdentityRoles(ctx, alice.ID, []string{"admin", "admin", "ops"}); err != nil {
		t.Fatal(err)
	}
	got = must[Identity](t)(s.IdentityByID(ctx, alice.ID))
	if !got.Enabled || !slices.Equal(got.Roles, []string{"admin", "ops"}) {
		t.Fatalf("after enable + roles: %+v", got)
	}
	if err := s.SetIdentityRoles(ctx, alice.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := must[Identity](t)(s.IdentityByID(ctx, alice.ID)); got.Roles == nil || len(got.Roles) != 0 {
		t.Fatalf("after clearing roles: %#v", got.Roles)
	}
	wantKind(t, s.SetIdentityRoles(ctx, alice.ID, []string{""}), fault.Invalid)
	wantKind(t, s.SetIdentityEnabled(ctx, "nope", true), fault.NotFound)
	wantKind(t, s.SetIdentityRoles(ctx, "nope", []string{"a"}), fault.NotFound)
	_, err = s.Identity(ctx, p.ID, "nope")
	wantKind(t, err, fault.NotFound)
	_, err = s.IdentityByID(ctx, "nope")
	wantKind(t, err, fault.NotFound)

	base := Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "new", Kind: KindService, KeyType: "crud"}
	tests := []struct {
		name   string
		change func(*Identity)
		want   fault.Kind
	}{
		{"duplicate name", func(i *Identity) { i.Name = "alice" }, fault.Conflict},
		{"bad kind", func(i *Identity) { i.Kind = "robot" }, fault.Invalid},
		{"empty kind", func(i *Identity) { i.Kind = "" }, fault.Invalid},
		{"key_type too short", func(i *Identity) { i.KeyType = "cru" }, fault.Invalid},
		{"key_type out of order", func(i *Identity) { i.KeyType = "rcud" }, fault.Invalid},
		{"key_type upper case", func(i *Identity) { i.KeyType = "CRUD" }, fault.Invalid},
		{"key_type empty", func(i *Identity) { i.KeyType = "" }, fault.Invalid},
		{"empty name", func(i *Identity) { i.Name = "" }, fault.Invalid},
		{"empty role", func(i *Identity) { i.Roles = []string{"a", ""} }, fault.Invalid},
		{"claims not JSON", func(i *Identity) { i.Claims = map[string]any{"f": func() {}} }, fault.Invalid},
		{"unknown project", func(i *Identity) { i.ProjectID = "nope" }, fault.NotFound},
		{"unknown space", func(i *Identity) { i.SpaceID = "nope" }, fault.NotFound},
		{"space of another project", func(i *Identity) { i.SpaceID = otherSpace.ID }, fault.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			tt.change(&in)
			_, err := s.CreateIdentity(ctx, in)
			wantKind(t, err, tt.want)
		})
	}
	for _, kt := range []string{"crud", "-r--", "----", "c--d"} {
		in := base
		in.Name, in.KeyType = "kt"+kt, kt
		if _, err := s.CreateIdentity(ctx, in); err != nil {
			t.Errorf("key_type %q refused: %v", kt, err)
		}
	}
}

// ---------------------------------------------------------------- databases

const secretDSN = "postgres://app:Sup3r-Secr3t-Passw0rd@db.internal:5432/shop?sslmode=require"

func TestDatabases(t *testing.T) { eachBackend(t, testDatabases) }

func testDatabases(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "t")
	_, q, _ := tenant(t, s, "u")

	d := must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: secretDSN}))
	if d.ID == "" || d.CreatedAt.IsZero() || d.DSN != secretDSN {
		t.Fatalf("AddDatabase = %+v", d)
	}
	d2 := must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "mi", Schema: "main", DSN: "file:/x.db"}))
	d3 := must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "hr", DSN: secretDSN + "&x=1"}))
	dq := must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: q.ID, Type: "pg", Schema: "public", DSN: "postgres://q"}))

	ids := func(ds []Database) []string {
		out := []string{}
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	of := must[[]Database](t)(s.DatabasesOf(ctx, p.ID))
	if want := []string{d2.ID, d3.ID, d.ID}; !slices.Equal(ids(of), want) {
		t.Fatalf("DatabasesOf order = %v, want %v", ids(of), want)
	}
	for _, x := range of {
		if x.ID == d.ID && (x.DSN != secretDSN || !x.CreatedAt.Equal(d.CreatedAt) || x.Schema != "public" || x.Type != "pg") {
			t.Fatalf("DatabasesOf returned %+v, want %+v", x, d)
		}
	}
	all := must[[]Database](t)(s.Databases(ctx))
	if len(all) != 4 || !slices.Contains(ids(all), dq.ID) {
		t.Fatalf("Databases = %v", ids(all))
	}
	if l := must[[]Database](t)(s.DatabasesOf(ctx, "none")); l == nil || len(l) != 0 {
		t.Fatalf("DatabasesOf(unknown) = %#v", l)
	}

	tests := []struct {
		name string
		in   Database
		want fault.Kind
	}{
		{"duplicate", Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: "other"}, fault.Conflict},
		{"unknown project", Database{ProjectID: "nope", Type: "pg", Schema: "x", DSN: "d"}, fault.NotFound},
		{"empty DSN", Database{ProjectID: p.ID, Type: "pg", Schema: "x"}, fault.Invalid},
		{"bad type", Database{ProjectID: p.ID, Type: "PG", Schema: "x", DSN: "d"}, fault.Invalid},
		{"one-letter type", Database{ProjectID: p.ID, Type: "p", Schema: "x", DSN: "d"}, fault.Invalid},
		{"empty schema", Database{ProjectID: p.ID, Type: "pg", Schema: "", DSN: "d"}, fault.Invalid},
		{"schema with slash", Database{ProjectID: p.ID, Type: "pg", Schema: "a/b", DSN: "d"}, fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AddDatabase(ctx, tt.in)
			wantKind(t, err, tt.want)
		})
	}

	if err := s.RemoveDatabase(ctx, p.ID, "pg", "public"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.RemoveDatabase(ctx, p.ID, "pg", "public"), fault.NotFound)
	wantKind(t, s.RemoveDatabase(ctx, p.ID, "ms", "dbo"), fault.NotFound)
	if of := must[[]Database](t)(s.DatabasesOf(ctx, p.ID)); len(of) != 2 {
		t.Fatalf("after remove DatabasesOf has %d entries, want 2", len(of))
	}
	// The other project's pg/public is untouched, and the slot can be reused.
	if all := must[[]Database](t)(s.Databases(ctx)); !slices.Contains(ids(all), dq.ID) {
		t.Fatal("RemoveDatabase removed another project's database")
	}
	must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: "again"}))
}

func TestDSNSealedAtRest(t *testing.T) { eachBackend(t, testDSNSealedAtRest) }

func testDSNSealedAtRest(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "t")
	must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: secretDSN}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var stored string
	if err := rawDB(t, dir).QueryRow(`SELECT dsn_cipher FROM databases`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "v1:") {
		t.Fatalf("stored DSN %q lacks v1: prefix", stored)
	}
	for _, leak := range []string{secretDSN, "Sup3r-Secr3t-Passw0rd", "db.internal"} {
		if strings.Contains(stored, leak) {
			t.Fatalf("stored DSN contains plaintext %q", leak)
		}
	}
	// Nor anywhere in the files on disk.
	for _, f := range []string{DBFile, DBFile + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "Sup3r-Secr3t-Passw0rd") {
			t.Fatalf("%s contains the plaintext password", f)
		}
	}

	s2 := openStore(t, dir)
	all := must[[]Database](t)(s2.Databases(ctx))
	if len(all) != 1 || all[0].DSN != secretDSN {
		t.Fatalf("after reopen Databases = %+v", all)
	}
}

// ---------------------------------------------------------------- secrets

func TestSealUnseal(t *testing.T) { eachBackend(t, testSealUnseal) }

func testSealUnseal(t *testing.T) {
	s, _ := newStore(t)
	for _, plain := range [][]byte{{}, []byte("x"), []byte(secretDSN), make([]byte, 4096)} {
		a, err := s.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if a == b {
			t.Fatal("two seals of the same value are equal: nonce not random")
		}
		if !strings.HasPrefix(a, "v1:") {
			t.Fatalf("sealed %q lacks v1: prefix", a)
		}
		got, err := s.Unseal(a)
		if err != nil || string(got) != string(plain) {
			t.Fatalf("Unseal = %q, %v", got, err)
		}
	}

	good, _ := s.Seal([]byte("hello"))
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(good, "v1:"))
	raw[len(raw)-1] ^= 1
	tampered := "v1:" + base64.StdEncoding.EncodeToString(raw)

	tests := []struct {
		name   string
		sealed string
		want   fault.Kind
		unseal bool
	}{
		{"no prefix", "hello", fault.Invalid, false},
		{"v2 prefix", "v2:" + strings.TrimPrefix(good, "v1:"), fault.Invalid, false},
		{"bad base64", "v1:!!!", fault.Invalid, false},
		{"too short", "v1:" + base64.StdEncoding.EncodeToString([]byte("short")), fault.Invalid, false},
		{"tampered", tampered, fault.Internal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Unseal(tt.sealed)
			wantKind(t, err, tt.want)
			if errors.Is(err, ErrUnseal) != tt.unseal {
				t.Fatalf("errors.Is(err, ErrUnseal) = %v, want %v (err: %v)", !tt.unseal, tt.unseal, err)
			}
		})
	}
}

func TestMasterKeyFile(t *testing.T) { eachBackend(t, testMasterKeyFile) }

func testMasterKeyFile(t *testing.T) {
	s, dir := newStore(t)
	path := filepath.Join(dir, KeyFile)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("master.key not created: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Fatalf("master.key mode = %o, want 600", perm)
	}
	if info.Size() != MasterKeySize {
		t.Fatalf("master.key has %d bytes, want %d", info.Size(), MasterKeySize)
	}
	sealed := must[string](t)(s.Seal([]byte("kept")))
	s.Close()

	// Reopening keeps the key.
	s2 := openStore(t, dir)
	if got, err := s2.Unseal(sealed); err != nil || string(got) != "kept" {
		t.Fatalf("after reopen Unseal = %q, %v", got, err)
	}
	s2.Close()

	// A key file holding hex text is accepted too.
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, KeyFile), []byte(hexKey(9)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s3 := openStore(t, dir2)
	t.Setenv(EnvMasterKey, hexKey(9))
	s4 := openStore(t, t.TempDir())
	if got, err := s4.Unseal(must[string](t)(s3.Seal([]byte("x")))); err != nil || string(got) != "x" {
		t.Fatalf("hex key file and same env key disagree: %v", err)
	}

	// A key file of the wrong size is refused.
	t.Setenv(EnvMasterKey, "")
	dir3 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir3, KeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), dir3); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("Open with a 5-byte key file: err = %v, want Invalid", err)
	}
}

func TestMasterKeyEnv(t *testing.T) { eachBackend(t, testMasterKeyEnv) }

func testMasterKeyEnv(t *testing.T) {
	key := make([]byte, MasterKeySize)
	for i := range key {
		key[i] = byte(i * 7)
	}
	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{"hex", hex.EncodeToString(key), true},
		{"hex upper case", strings.ToUpper(hex.EncodeToString(key)), true},
		{"base64", base64.StdEncoding.EncodeToString(key), true},
		{"base64 with newline", base64.StdEncoding.EncodeToString(key) + "\n", true},
		{"base64 16 bytes", base64.StdEncoding.EncodeToString(key[:16]), false},
		{"hex 31 bytes", hex.EncodeToString(key[:31]), false},
		{"base64 33 bytes", base64.StdEncoding.EncodeToString(append(key, 1)), false},
		{"garbage", "not a key at all", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvMasterKey, tt.value)
			dir := t.TempDir()
			s, err := Open(t.Context(), dir)
			if !tt.ok {
				wantKind(t, err, fault.Invalid)
				if strings.Contains(err.Error(), strings.TrimSpace(tt.value)) {
					t.Fatalf("error repeats the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := os.Stat(filepath.Join(dir, KeyFile)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("master.key created although %s is set (stat err %v)", EnvMasterKey, err)
			}
			// The env key is the one used: decrypt by hand.
			sealed := must[string](t)(s.Seal([]byte("by hand")))
			raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
			block, _ := aes.NewCipher(key)
			gcm, _ := cipher.NewGCM(block)
			plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], nil)
			if err != nil || string(plain) != "by hand" {
				t.Fatalf("value not sealed with %s: %v", EnvMasterKey, err)
			}
		})
	}
}

func TestWrongMasterKey(t *testing.T) { eachBackend(t, testWrongMasterKey) }

func testWrongMasterKey(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	t.Setenv(EnvMasterKey, hexKey(1))
	s := openStore(t, dir)
	_, p, _ := tenant(t, s, "t")
	must[Database](t)(s.AddDatabase(ctx, Database{ProjectID: p.ID, Type: "pg", Schema: "public", DSN: secretDSN}))
	if err := s.PutSealedSetting(ctx, "signing_key", "very secret"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	t.Setenv(EnvMasterKey, base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", MasterKeySize))))
	s2 := openStore(t, dir)
	for name, call := range map[string]func() error{
		"Databases":     func() error { _, err := s2.Databases(ctx); return err },
		"DatabasesOf":   func() error { _, err := s2.DatabasesOf(ctx, p.ID); return err },
		"SealedSetting": func() error { _, _, err := s2.SealedSetting(ctx, "signing_key"); return err },
	} {
		err := call()
		if !errors.Is(err, ErrUnseal) {
			t.Fatalf("%s with the wrong key: err = %v, want ErrUnseal", name, err)
		}
		if !strings.Contains(err.Error(), "master key") {
			t.Fatalf("%s error does not name the master key: %v", name, err)
		}
	}
	// Things that need no secret still work.
	if _, err := s2.ProjectByID(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	s2.Close()

	// The right key again: all fine.
	t.Setenv(EnvMasterKey, hexKey(1))
	s3 := openStore(t, dir)
	if v, ok, err := s3.SealedSetting(ctx, "signing_key"); err != nil || !ok || v != "very secret" {
		t.Fatalf("SealedSetting = %q %v %v", v, ok, err)
	}
}

// ---------------------------------------------------------------- locks

func TestLocks(t *testing.T) { eachBackend(t, testLocks) }

func testLocks(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "t")
	_, q, _ := tenant(t, s, "u")

	l1 := must[Lock](t)(s.AddLock(ctx, Lock{ProjectID: p.ID, Pattern: "pg/public/*", Mask: "-r--"}))
	if l1.ID == "" || l1.ProjectID != p.ID || l1.Pattern != "pg/public/*" || l1.Mask != "-r--" {
		t.Fatalf("AddLock = %+v", l1)
	}
	l2 := must[Lock](t)(s.AddLock(ctx, Lock{ProjectID: p.ID, Pattern: "*/*/audit_[a-z]*", Mask: "-r--"}))
	lq := must[Lock](t)(s.AddLock(ctx, Lock{ProjectID: q.ID, Pattern: "pg/public/*", Mask: "----"}))

	if got := must[[]Lock](t)(s.Locks(ctx, p.ID)); !slices.Equal(got, []Lock{l2, l1}) {
		t.Fatalf("Locks = %+v", got)
	}
	if got := must[[]Lock](t)(s.AllLocks(ctx)); len(got) != 3 || !slices.Contains(got, lq) {
		t.Fatalf("AllLocks = %+v", got)
	}

	tests := []struct {
		name string
		in   Lock
		want fault.Kind
	}{
		{"duplicate", Lock{ProjectID: p.ID, Pattern: "pg/public/*", Mask: "crud"}, fault.Conflict},
		{"unknown project", Lock{ProjectID: "nope", Pattern: "pg/x/*", Mask: "-r--"}, fault.NotFound},
		{"empty pattern", Lock{ProjectID: p.ID, Pattern: "", Mask: "-r--"}, fault.Invalid},
		{"trailing slash", Lock{ProjectID: p.ID, Pattern: "pg/", Mask: "-r--"}, fault.Invalid},
		{"four segments", Lock{ProjectID: p.ID, Pattern: "pg/a/b/c", Mask: "-r--"}, fault.Invalid},
		{"empty segment", Lock{ProjectID: p.ID, Pattern: "pg//t", Mask: "-r--"}, fault.Invalid},
		{"bad glob", Lock{ProjectID: p.ID, Pattern: "pg/public/[", Mask: "-r--"}, fault.Invalid},
		{"bad mask", Lock{ProjectID: p.ID, Pattern: "pg/x/*", Mask: "r---"}, fault.Invalid},
		{"empty mask", Lock{ProjectID: p.ID, Pattern: "pg/x/*", Mask: ""}, fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AddLock(ctx, tt.in)
			wantKind(t, err, tt.want)
		})
	}

	if err := s.RemoveLock(ctx, p.ID, "pg/public/*"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.RemoveLock(ctx, p.ID, "pg/public/*"), fault.NotFound)
	if got := must[[]Lock](t)(s.Locks(ctx, p.ID)); !slices.Equal(got, []Lock{l2}) {
		t.Fatalf("after remove Locks = %+v", got)
	}
	if got := must[[]Lock](t)(s.Locks(ctx, q.ID)); !slices.Equal(got, []Lock{lq}) {
		t.Fatalf("RemoveLock touched another project: %+v", got)
	}
	if got := must[[]Lock](t)(s.Locks(ctx, "none")); got == nil || len(got) != 0 {
		t.Fatalf("Locks(unknown) = %#v", got)
	}
}

// ---------------------------------------------------------------- revocations, settings

func TestRevocations(t *testing.T) { eachBackend(t, testRevocations) }

func testRevocations(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	if ok := must[bool](t)(s.IsRevoked(ctx, "jti-1")); ok {
		t.Fatal("jti-1 revoked before RevokeToken")
	}
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	if err := s.RevokeToken(ctx, "jti-1", future); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "jti-1", future); err != nil {
		t.Fatalf("second revoke of the same jti: %v", err)
	}
	if err := s.RevokeToken(ctx, "jti-old", past); err != nil {
		t.Fatal(err)
	}
	for jti, want := range map[string]bool{"jti-1": true, "jti-old": true, "jti-2": false} {
		if got := must[bool](t)(s.IsRevoked(ctx, jti)); got != want {
			t.Fatalf("IsRevoked(%s) = %v, want %v", jti, got, want)
		}
	}
	wantKind(t, s.RevokeToken(ctx, "", future), fault.Invalid)
	// A token and its ancestors in one lookup: any revoked one counts.
	for _, c := range []struct {
		jtis []string
		want bool
	}{{nil, false}, {[]string{"jti-2", "jti-3"}, false}, {[]string{"jti-2", "jti-3", "jti-1"}, true}, {[]string{"jti-1", "jti-2"}, true}} {
		if got := must[bool](t)(s.IsRevoked(ctx, c.jtis...)); got != c.want {
			t.Fatalf("IsRevoked(%v) = %v, want %v", c.jtis, got, c.want)
		}
	}

	if n := must[int64](t)(s.PurgeRevoked(ctx, time.Now())); n != 1 {
		t.Fatalf("PurgeRevoked deleted %d, want 1", n)
	}
	if must[bool](t)(s.IsRevoked(ctx, "jti-old")) || !must[bool](t)(s.IsRevoked(ctx, "jti-1")) {
		t.Fatal("PurgeRevoked removed the wrong records")
	}
}

func TestSettings(t *testing.T) { eachBackend(t, testSettings) }

func testSettings(t *testing.T) {
	s, dir := newStore(t)
	ctx := t.Context()
	if v, ok, err := s.Setting(ctx, "theme"); err != nil || ok || v != "" {
		t.Fatalf("Setting(unset) = %q %v %v", v, ok, err)
	}
	for _, v := range []string{"dark", "light", ""} {
		if err := s.PutSetting(ctx, "theme", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Setting(ctx, "theme"); err != nil || !ok || got != v {
			t.Fatalf("Setting = %q %v %v, want %q", got, ok, err, v)
		}
	}
	wantKind(t, s.PutSetting(ctx, "", "x"), fault.Invalid)

	if v, ok, err := s.SealedSetting(ctx, "signing_key"); err != nil || ok || v != "" {
		t.Fatalf("SealedSetting(unset) = %q %v %v", v, ok, err)
	}
	for _, v := range []string{"k1-secret-value", "k2-secret-value"} {
		if err := s.PutSealedSetting(ctx, "signing_key", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.SealedSetting(ctx, "signing_key"); err != nil || !ok || got != v {
			t.Fatalf("SealedSetting = %q %v %v, want %q", got, ok, err, v)
		}
	}
	var raw string
	if err := rawDB(t, dir).QueryRow(`SELECT value FROM settings WHERE name = 'signing_key'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, "v1:") || strings.Contains(raw, "secret-value") {
		t.Fatalf("sealed setting stored as %q", raw)
	}
	// A plain setting read as sealed is refused, not returned.
	if _, _, err := s.SealedSetting(ctx, "theme"); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("SealedSetting of a plain value: err = %v, want Invalid", err)
	}
}

// ---------------------------------------------------------------- change counter

func TestChangeSeq(t *testing.T) { eachBackend(t, testChangeSeq) }

func testChangeSeq(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != 0 {
		t.Fatalf("fresh ChangeSeq = %d, want 0", seq)
	}
	var (
		org   Org
		proj  Project
		space Space
		ident Identity
	)
	steps := []struct {
		name string
		op   func() error
	}{
		{"CreateOrg", func() (err error) { org, err = s.CreateOrg(ctx, "O", "o"); return }},
		{"CreateProject", func() (err error) { proj, err = s.CreateProject(ctx, org.ID, "P", "p"); return }},
		{"CreateSpace", func() (err error) { space, err = s.CreateSpace(ctx, proj.ID, "main", false); return }},
		{"SetSpaceMCP", func() error { return s.SetSpaceMCP(ctx, space.ID, true) }},
		{"CreateIdentity", func() (err error) {
			ident, err = s.CreateIdentity(ctx, Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: "a", Kind: KindUser, KeyType: "crud", Enabled: true})
			return
		}},
		{"SetIdentityEnabled", func() error { return s.SetIdentityEnabled(ctx, ident.ID, false) }},
		{"SetIdentityRoles", func() error { return s.SetIdentityRoles(ctx, ident.ID, []string{"r"}) }},
		{"AddDatabase", func() error {
			_, err := s.AddDatabase(ctx, Database{ProjectID: proj.ID, Type: "pg", Schema: "public", DSN: "x"})
			return err
		}},
		{"RemoveDatabase", func() error { return s.RemoveDatabase(ctx, proj.ID, "pg", "public") }},
		{"AddLock", func() error {
			_, err := s.AddLock(ctx, Lock{ProjectID: proj.ID, Pattern: "*/*/*", Mask: "-r--"})
			return err
		}},
		{"RemoveLock", func() error { return s.RemoveLock(ctx, proj.ID, "*/*/*") }},
		{"RevokeToken", func() error { return s.RevokeToken(ctx, "j", time.Now()) }},
		{"PutSetting", func() error { return s.PutSetting(ctx, "a", "b") }},
		{"PutSealedSetting", func() error { return s.PutSealedSetting(ctx, "c", "d") }},
	}
	prev := int64(0)
	for _, st := range steps {
		if err := st.op(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		seq := must[int64](t)(s.ChangeSeq(ctx))
		if seq <= prev {
			t.Fatalf("after %s ChangeSeq = %d, want > %d", st.name, seq, prev)
		}
		prev = seq
	}

	// Failed writes and reads leave it alone.
	failed := []func() error{
		func() error { _, err := s.CreateOrg(ctx, "O", "o"); return err },
		func() error { return s.RemoveDatabase(ctx, proj.ID, "pg", "public") },
		func() error { return s.SetIdentityEnabled(ctx, "nope", true) },
		func() error {
			_, err := s.CreateIdentity(ctx, Identity{ProjectID: proj.ID, SpaceID: space.ID, Name: "a", Kind: KindUser, KeyType: "crud"})
			return err
		},
		func() error { _, err := s.Databases(ctx); return err },
		func() error { _, err := s.IsRevoked(ctx, "j"); return err },
	}
	for i, op := range failed {
		_ = op()
		if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != prev {
			t.Fatalf("op %d changed ChangeSeq from %d to %d", i, prev, seq)
		}
	}
}

func TestChangeSeqSharedAcrossHandles(t *testing.T) { eachBackend(t, testChangeSeqSharedAcrossHandles) }

func testChangeSeqSharedAcrossHandles(t *testing.T) {
	a, dir := newStore(t)
	b := openStore(t, dir)
	ctx := t.Context()
	before := must[int64](t)(b.ChangeSeq(ctx))
	must[Org](t)(a.CreateOrg(ctx, "X", "x"))
	if after := must[int64](t)(b.ChangeSeq(ctx)); after != before+1 {
		t.Fatalf("other handle sees ChangeSeq %d, want %d", after, before+1)
	}
}

// ---------------------------------------------------------------- concurrency

// TestConcurrentWriters has two Store handles on one directory write from
// many goroutines at once; none may fail with SQLITE_BUSY, and the change
// counter must account for every write.
func TestConcurrentWriters(t *testing.T) { eachBackend(t, testConcurrentWriters) }

func testConcurrentWriters(t *testing.T) {
	a, dir := newStore(t)
	b := openStore(t, dir)
	ctx := t.Context()
	_, p, sp := tenant(t, a, "t")
	start := must[int64](t)(a.ChangeSeq(ctx))

	const workers, ops = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*ops)
	for h, s := range []*Store{a, b} {
		for w := range workers {
			wg.Go(func() {
				for i := range ops {
					tag := fmt.Sprintf("h%d-w%d-%d", h, w, i)
					var err error
					switch i % 5 {
					case 0:
						_, err = s.CreateSpace(ctx, p.ID, tag, i%2 == 0)
					case 1:
						err = s.RevokeToken(ctx, tag, time.Now().Add(time.Hour))
					case 2:
						err = s.PutSetting(ctx, "k-"+tag, tag)
					case 3:
						err = s.SetSpaceMCP(ctx, sp.ID, i%2 == 0)
					case 4:
						_, err = s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: tag, Kind: KindService, KeyType: "-r--"})
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", tag, err)
					}
					if _, err := s.ChangeSeq(ctx); err != nil {
						errs <- fmt.Errorf("%s ChangeSeq: %w", tag, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if end := must[int64](t)(b.ChangeSeq(ctx)); end != start+2*workers*ops {
		t.Fatalf("ChangeSeq moved by %d, want %d", end-start, 2*workers*ops)
	}
	if n := len(must[[]Identity](t)(a.ListIdentities(ctx, p.ID))); n != 2*workers*ops/5 {
		t.Fatalf("%d identities, want %d", n, 2*workers*ops/5)
	}
}

// helperEnv, when set, makes TestMain run as a writer subprocess for
// TestMultiProcessWriters instead of running the tests.
const helperEnv = "MINIMAL_STORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(writerProcess(spec))
	}
	// A control plane named in the caller's environment is not the tests'
	// to write: eachBackend sets one per subtest, and the rest use SQLite.
	os.Unsetenv(EnvControlDSN)
	os.Exit(m.Run())
}

// writerProcess opens the store named by spec ("dir|projectID|tag|n") and
// performs n writes.
func writerProcess(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[3])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	for i := range n {
		var err error
		if i%2 == 0 {
			_, err = s.CreateSpace(ctx, parts[1], fmt.Sprintf("%s-%d", parts[2], i), false)
		} else {
			err = s.RevokeToken(ctx, fmt.Sprintf("%s-%d", parts[2], i), time.Now().Add(time.Hour))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			return 1
		}
	}
	return 0
}

// TestMultiProcessWriters runs writers in separate processes (as the CLI and
// a server would) alongside writes from this process.
func TestMultiProcessWriters(t *testing.T) { eachBackend(t, testMultiProcessWriters) }

func testMultiProcessWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s, dir := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "t")
	start := must[int64](t)(s.ChangeSeq(ctx))

	const procs, ops = 3, 30
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|p%d|%d", helperEnv, dir, p.ID, i, ops))
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	for i := range ops {
		if _, err := s.CreateSpace(ctx, p.ID, fmt.Sprintf("local-%d", i), true); err != nil {
			t.Errorf("local write %d: %v", i, err)
		}
	}
	wg.Wait()
	for i := range procs {
		if errs[i] != nil {
			t.Errorf("writer process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	if end := must[int64](t)(s.ChangeSeq(ctx)); end != start+int64(procs*ops+ops) {
		t.Fatalf("ChangeSeq moved by %d, want %d", end-start, procs*ops+ops)
	}
}
