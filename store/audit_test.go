package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/migrations"
)

func auditEntry(project, identity, object, action, outcome string, at time.Time) AuditEntry {
	return AuditEntry{
		At: at, ProjectID: project, IdentityID: "id-" + identity, Identity: identity, Roles: []string{"analyst", "admin"},
		Face: "rest", Object: object, Action: action, Rows: 3, Outcome: outcome, RequestID: "req-" + identity,
		Duration: 1500 * time.Microsecond,
	}
}

func TestAuditLog(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "aud")
		_, other, _ := tenant(t, s, "oth")
		seq0 := must[int64](t)(s.ChangeSeq(ctx))
		base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		var batch []AuditEntry
		for i := range 120 {
			who, act, out := "alice", "read", "ok"
			if i%3 == 0 {
				who, act, out = "bob", "create", "FORBIDDEN"
			}
			e := auditEntry(p.ID, who, "pg/public/t", act, out, base.Add(time.Duration(i)*time.Second))
			e.ID = fmt.Sprintf("0000-%04d", i) // ordered like time-ordered ids
			batch = append(batch, e)
		}
		if err := s.AppendAudit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendAudit(ctx, []AuditEntry{auditEntry(other.ID, "carol", "mi/app/notes", "delete", "ok", base)}); err != nil {
			t.Fatal(err)
		}
		if seq := must[int64](t)(s.ChangeSeq(ctx)); seq != seq0 {
			t.Errorf("audit writes moved the change counter %d → %d", seq0, seq)
		}

		all := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{Limit: MaxAuditLimit}))
		if len(all) != 120 {
			t.Fatalf("%d entries, want 120", len(all))
		}
		first := all[0]
		want := batch[119]
		if first.ID != want.ID || !first.At.Equal(want.At) || first.Identity != want.Identity || first.Rows != 3 ||
			first.Duration != want.Duration || fmt.Sprint(first.Roles) != "[analyst admin]" || first.RequestID != want.RequestID ||
			first.Face != "rest" || first.Object != "pg/public/t" || first.IdentityID != want.IdentityID {
			t.Fatalf("newest entry %+v, want %+v", first, want)
		}
		if def := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{})); len(def) != DefaultAuditLimit {
			t.Errorf("default limit gave %d", len(def))
		}

		tests := []struct {
			name string
			f    AuditFilter
			want int
		}{
			{"identity", AuditFilter{Identity: "bob", Limit: 1000}, 40},
			{"action", AuditFilter{Action: "read", Limit: 1000}, 80},
			{"outcome error", AuditFilter{Outcome: "error", Limit: 1000}, 40},
			{"outcome ok", AuditFilter{Outcome: "ok", Limit: 1000}, 80},
			{"outcome code", AuditFilter{Outcome: "FORBIDDEN", Limit: 1000}, 40},
			{"object", AuditFilter{Object: "pg/public/t", Limit: 1000}, 120},
			{"other object", AuditFilter{Object: "mi/app/notes", Limit: 1000}, 0},
			{"since", AuditFilter{Since: base.Add(100 * time.Second), Limit: 1000}, 20},
			{"until", AuditFilter{Until: base.Add(10 * time.Second), Limit: 1000}, 10},
			{"limit", AuditFilter{Limit: 7}, 7},
			{"before", AuditFilter{Before: batch[50].ID, Limit: 1000}, 50},
		}
		for _, tt := range tests {
			got := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, tt.f))
			if len(got) != tt.want {
				t.Errorf("%s: %d entries, want %d", tt.name, len(got), tt.want)
			}
		}
		// Paging backwards visits every entry once, newest first.
		seen, before := 0, ""
		for {
			page := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{Limit: 25, Before: before}))
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				if want := batch[119-seen].ID; e.ID != want {
					t.Fatalf("page entry %d is %s, want %s", seen, e.ID, want)
				}
				seen++
			}
			before = page[len(page)-1].ID
		}
		if seen != 120 {
			t.Errorf("paging saw %d entries", seen)
		}
		for _, f := range []AuditFilter{{Limit: -1}, {Limit: MaxAuditLimit + 1}, {Action: "drop"}} {
			if _, err := s.AuditLog(ctx, p.ID, f); fault.KindOf(err) != fault.Invalid {
				t.Errorf("%+v: err %v, want Invalid", f, err)
			}
		}
		if got := must[[]AuditEntry](t)(s.AuditLog(ctx, "no-such-project", AuditFilter{})); got == nil || len(got) != 0 {
			t.Errorf("unknown project: %v", got)
		}
	})
}

func TestAuditWriter(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "aw")
		w := NewAuditWriter(s, 4000, nil)
		for i := range 1500 {
			if !w.Record(auditEntry(p.ID, fmt.Sprintf("u%d", i%7), "pg/public/t", "read", "ok", time.Now())) {
				t.Fatalf("entry %d dropped with room in the queue", i)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := w.Close(cctx); err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if st.Written != 1500 || st.Queued != 0 || st.DroppedFull != 0 || st.DroppedError != 0 {
			t.Fatalf("stats %+v", st)
		}
		got := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{Limit: MaxAuditLimit}))
		if len(got) != MaxAuditLimit {
			t.Fatalf("%d entries stored", len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].ID >= got[i-1].ID {
				t.Fatalf("ids not newest first at %d: %s then %s", i, got[i-1].ID, got[i].ID)
			}
		}
		if w.Record(auditEntry(p.ID, "late", "pg/public/t", "read", "ok", time.Now())) {
			t.Error("Record after Close was accepted")
		}
		if w.Stats().DroppedFull != 1 {
			t.Errorf("late entry not counted: %+v", w.Stats())
		}
		if err := w.Close(cctx); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestAuditWriterNeverBlocks: with the store gone, Record still returns at
// once; what does not fit is counted as dropped, and failed writes too.
func TestAuditWriterNeverBlocks(t *testing.T) {
	s, _ := newStore(t)
	_, p, _ := tenant(t, s, "nb")
	s.Close() // every write now fails
	w := NewAuditWriter(s, 8, nil)
	start := time.Now()
	accepted := 0
	for i := range 1000 {
		if w.Record(auditEntry(p.ID, "u", "pg/public/t", "read", "ok", time.Now())) {
			accepted++
		}
		_ = i
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("1000 Records took %v", d)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Written != 0 || st.DroppedFull+st.DroppedError != 1000 || st.DroppedFull == 0 || int(st.DroppedError) != accepted {
		t.Fatalf("stats %+v (accepted %d)", st, accepted)
	}
}

func TestLiveSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, sp := tenant(t, s, "ls")
		id := must[Identity](t)(s.CreateIdentity(ctx, Identity{ProjectID: p.ID, SpaceID: sp.ID, Name: "agent", Kind: KindMCP, KeyType: "crud", Enabled: true}))
		open := func(idle time.Duration) Session {
			return must[Session](t)(s.CreateSession(ctx, Session{ProjectID: p.ID, IdentityID: id.ID, Name: "n", Context: "c", IdleTimeout: idle}))
		}
		open(time.Hour)
		open(0)
		ended := open(time.Hour)
		if err := s.EndSession(ctx, ended.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		open(time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		if n := must[int64](t)(s.LiveSessions(ctx, time.Now())); n != 2 {
			t.Fatalf("live sessions %d, want 2 (one idle, one without idle timeout)", n)
		}
		if n := must[int64](t)(s.LiveSessions(ctx, time.Now().Add(2*time.Hour))); n != 1 {
			t.Fatalf("live sessions in 2 h: %d, want 1", n)
		}
	})
}

// TestAuditRolesPerRow: each row of a batch keeps its own roles, identity,
// face, object, action and outcome when they alternate within the batch and
// across its 50-row INSERTs (each is bound once per run of equal ones).
func TestAuditValuesPerRow(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "rol")
		roles := [][]string{{"analyst", "admin"}, {"analyst", "admin"}, {"reader"}, nil, {}, {"analyst"}, {"analyst", "admin"}}
		base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		var batch []AuditEntry
		for i := range 130 {
			e := auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", base.Add(time.Duration(i)*time.Second))
			e.ID = fmt.Sprintf("0000-%04d", i)
			e.Roles = roles[i%len(roles)]
			e.Identity, e.IdentityID = fmt.Sprint("who", i%3), fmt.Sprint("id", i%3)
			e.Face, e.Object, e.Action, e.Outcome = []string{"rest", "mcp"}[i/2%2], fmt.Sprint("pg/public/t", i/5%2), []string{"read", "update"}[i/7%2], []string{"ok", "FORBIDDEN"}[i/11%2]
			batch = append(batch, e)
		}
		if err := s.AppendAudit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		all := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{Limit: MaxAuditLimit}))
		if len(all) != len(batch) {
			t.Fatalf("%d entries, want %d", len(all), len(batch))
		}
		for _, e := range all {
			var i int
			if _, err := fmt.Sscanf(e.ID, "0000-%d", &i); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(e.Roles), fmt.Sprint(nonNil(roles[i%len(roles)])); got != want || e.Roles == nil {
				t.Errorf("entry %d: roles %v (nil %v), want %s", i, e.Roles, e.Roles == nil, want)
			}
			w := batch[i]
			if e.Identity != w.Identity || e.IdentityID != w.IdentityID || e.Face != w.Face || e.Object != w.Object ||
				e.Action != w.Action || e.Outcome != w.Outcome || e.ProjectID != w.ProjectID || e.RequestID != w.RequestID {
				t.Errorf("entry %d: %+v, want %+v", i, e, w)
			}
		}
	})
}

// TestAuditSharedChunk: a chunk of entries that share their principal,
// face, object, action, outcome and message is written with those values
// bound once (auditInsertSharing); every row reads back as it was given,
// beside chunks that share all but one value (written row by row of
// values) and a batch's rest.
func TestAuditSharedChunk(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "shr")
		base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		var batch []AuditEntry
		for i := range 4*auditRowsPerInsert + 7 {
			e := auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", base.Add(time.Duration(i)*time.Millisecond+time.Duration(i)))
			e.ID = fmt.Sprintf("0000-%04d", i)
			e.Rows, e.Duration, e.RequestID = int64(i), time.Duration(1000+i), fmt.Sprint("req-", i)
			switch chunk, k := i/auditRowsPerInsert, i%auditRowsPerInsert; {
			case chunk == 1:
				// nil and no roles are stored alike: still one chunk.
				if k%2 == 0 {
					e.Roles = nil
				} else {
					e.Roles = []string{}
				}
				e.Outcome, e.Message = "FORBIDDEN", "no"
			case chunk == 2 && k == 49:
				e.Message = "the last one differs"
			case chunk == 3 && k == 0:
				e.Roles = []string{"analyst"}
			}
			batch = append(batch, e)
		}
		if !sharedChunk(batch[:auditRowsPerInsert]) || !sharedChunk(batch[auditRowsPerInsert:2*auditRowsPerInsert]) ||
			sharedChunk(batch[2*auditRowsPerInsert:3*auditRowsPerInsert]) || sharedChunk(batch[3*auditRowsPerInsert:4*auditRowsPerInsert]) {
			t.Fatal("the chunks are not shared as the test means them")
		}
		if err := s.AppendAudit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		all := must[[]AuditEntry](t)(s.AuditLog(ctx, p.ID, AuditFilter{Limit: MaxAuditLimit}))
		if len(all) != len(batch) {
			t.Fatalf("%d entries, want %d", len(all), len(batch))
		}
		for j, e := range all {
			w := batch[len(batch)-1-j]
			w.Roles = nonNil(w.Roles)
			if fmt.Sprintf("%#v", e) != fmt.Sprintf("%#v", w) {
				t.Errorf("entry %s reads back as\n%#v\nwant\n%#v", w.ID, e, w)
			}
		}
	})
}

// TestAuditInsertsAnonymous: the audit INSERTs bind '?' placeholders only.
// The SQLite driver looks up the name of every parameter it binds, and for
// a numbered one ($n) that lookup scans every name of the statement: a
// chunk of numbered ones binds in quadratic time.
func TestAuditInsertsAnonymous(t *testing.T) {
	for _, c := range auditChunks {
		for _, q := range []string{c.insert, c.shared} {
			if strings.ContainsAny(q, "$:@") {
				t.Errorf("audit INSERT has a named or numbered placeholder: %.120s…", q)
			}
		}
		if n := strings.Count(c.insert, "?"); n != 14*c.n {
			t.Errorf("the INSERT of %d rows binds %d values, want %d", c.n, n, 14*c.n)
		}
		if n := strings.Count(c.shared, "?"); c.n > 1 && n != auditShared+5*c.n {
			t.Errorf("the shared INSERT of %d rows binds %d values, want %d", c.n, n, auditShared+5*c.n)
		}
	}
}

// TestAuditKeyMigration: 0008_audit_key rebuilds audit_log keyed by
// (project_id, id) with one index in all, and keeps every row: each
// project's log reads back whole, newest first, page by page, and the
// filters find what they found.
func TestAuditKeyMigration(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		dir := auditMigration(t, "audit_key")
		var n int
		if err := rawDB(t, dir).QueryRowContext(t.Context(), auditIndexes()).Scan(&n); err != nil || n != 1 {
			t.Fatalf("audit_log has %d indexes (%v), want 1: its key", n, err)
		}
	})
}

// TestAuditWithoutRowidMigration: on SQLite, 0009_audit_without_rowid
// rebuilds audit_log as a WITHOUT ROWID table, its rows in the B-tree of
// its key, and keeps every row as TestAuditKeyMigration does; AuditLog's
// reads walk the key, sorting nothing. On PostgreSQL the version is
// recorded and the table is as 0008_audit_key left it.
func TestAuditWithoutRowidMigration(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		dir := auditMigration(t, "audit_without_rowid")
		ctx := t.Context()
		db := rawDB(t, dir)
		var v, n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = 9`).Scan(&v); err != nil || v != 1 {
			t.Fatalf("version 9 recorded %d times (%v), want once", v, err)
		}
		if err := db.QueryRowContext(ctx, auditIndexes()).Scan(&n); err != nil || n != 1 {
			t.Fatalf("audit_log has %d indexes (%v), want 1: its key", n, err)
		}
		if onPostgres() {
			return
		}
		var wr int
		if err := db.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE name = 'audit_log'`).Scan(&wr); err != nil || wr != 1 {
			t.Fatalf("audit_log WITHOUT ROWID = %d (%v), want 1", wr, err)
		}
		// What AuditLog runs, with and without filters: a search of the key
		// in its order, no other index and no sort.
		for _, where := range []string{"", " AND identity = ? AND at >= ? AND id < ?"} {
			args := []any{"p1"}
			if where != "" {
				args = append(args, "bob", 0, "z")
			}
			args = append(args, 10)
			rows, err := db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT `+auditCols+` FROM audit_log WHERE project_id = ?`+where+
				` ORDER BY id DESC LIMIT ?`, args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			if len(plan) != 1 || !strings.Contains(plan[0], "SEARCH audit_log USING PRIMARY KEY (project_id=?") {
				t.Errorf("AuditLog%s plans %q, want one search of the key", where, plan)
			}
		}
	})
}

// auditIndexes counts the indexes of audit_log (on SQLite, its key
// whether stored apart from the rows or not).
func auditIndexes() string {
	if onPostgres() {
		return `SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'audit_log'`
	}
	return `SELECT COUNT(*) FROM pragma_index_list('audit_log')`
}

// auditMigration makes a control plane at the version before the
// migration named name, with audit rows of two projects, and opens it,
// applying the rest; each project's log must read back whole, newest
// first, page by page, and the filters find what they found. It returns
// the data directory.
func auditMigration(t *testing.T, name string) string {
	t.Helper()
	t.Setenv(EnvMasterKey, "")
	ctx := t.Context()
	dir := t.TempDir()
	i := slices.IndexFunc(migrations.All(), func(m migrations.Migration) bool { return m.Name == name })
	if i < 0 {
		t.Fatalf("no migration %s", name)
	}

	// The control plane as it was: the migrations before, and audit rows
	// of two projects.
	db := rawDB(t, dir)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, createSchemaMigrations); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations.All()[:i] {
		if err := applyMigration(ctx, conn, testDialect(), m); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	byProject := map[string][]AuditEntry{}
	for k := range 130 {
		project, who, action, outcome := "p1", "alice", "read", "ok"
		if k%3 == 0 {
			project = "p2"
		}
		if k%4 == 0 {
			who, action, outcome = "bob", "create", "FORBIDDEN"
		}
		e := auditEntry(project, who, fmt.Sprint("pg/public/t", k%2), action, outcome, base.Add(time.Duration(k)*time.Second))
		e.ID, e.Rows, e.RequestID, e.Duration = must[string](t)(newID()), int64(k), fmt.Sprint("req-", k), time.Duration(1000+k)
		if k%5 == 0 {
			e.Roles, e.Message = []string{}, "no"
		}
		roles := must[[]byte](t)(json.Marshal(e.Roles))
		if _, err := conn.ExecContext(ctx, auditInsert(1), e.ID, e.At.UnixNano(), e.ProjectID, e.IdentityID, e.Identity, string(roles),
			e.Face, e.Object, e.Action, e.Rows, e.Outcome, e.Message, e.RequestID, int64(e.Duration)); err != nil {
			t.Fatal(err)
		}
		byProject[project] = append(byProject[project], e)
	}
	conn.Close()

	s := openStore(t, dir)
	for project, entries := range byProject {
		sameNewestFirst(t, project, auditPages(t, s, project, 17), entries)
		for _, f := range []AuditFilter{
			{Identity: "bob"}, {Action: "read"}, {Outcome: "error"}, {Object: "pg/public/t1"},
			{Since: base.Add(40 * time.Second), Until: base.Add(90 * time.Second)}, {Before: entries[len(entries)/2].ID},
		} {
			f.Limit = MaxAuditLimit
			var want []string
			for _, e := range slices.Backward(entries) {
				if (f.Identity == "" || e.Identity == f.Identity) && (f.Action == "" || e.Action == f.Action) &&
					(f.Outcome == "" || e.Outcome != "ok") && (f.Object == "" || e.Object == f.Object) &&
					(f.Since.IsZero() || !e.At.Before(f.Since)) && (f.Until.IsZero() || e.At.Before(f.Until)) &&
					(f.Before == "" || e.ID < f.Before) {
					want = append(want, e.ID)
				}
			}
			var got []string
			for _, e := range must[[]AuditEntry](t)(s.AuditLog(ctx, project, f)) {
				got = append(got, e.ID)
			}
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%s %+v: %d entries %v, want %d %v", project, f, len(got), got, len(want), want)
			}
		}
	}
	// Written after the migration, read back after what was there.
	more := auditEntry("p1", "carol", "pg/public/t0", "read", "ok", base.Add(time.Hour))
	more.ID = must[string](t)(newID())
	if err := s.AppendAudit(ctx, []AuditEntry{more}); err != nil {
		t.Fatal(err)
	}
	if got := must[[]AuditEntry](t)(s.AuditLog(ctx, "p1", AuditFilter{Limit: 2})); len(got) != 2 || got[0].ID != more.ID {
		t.Fatalf("after the migration the newest entry of p1 reads %+v, want carol's", got)
	}
	return dir
}

// TestIDSeq: audit ids are version 7 UUIDs of the time given, each sorting
// after the one made before it, also for a time not after the last; ids
// made at once by many goroutines are distinct.
func TestIDSeq(t *testing.T) {
	var q idSeq
	at := time.Date(2025, 12, 2, 1, 2, 3, 456789012, time.UTC)
	prev := ""
	for k, a := range []time.Time{at, at, at.Add(-time.Hour), at.Add(time.Millisecond), {}, at} {
		id := q.next(a)
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("id %d %q: %v, version %d, variant %v", k, id, err, u.Version(), u.Variant())
		}
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", k, id, prev)
		}
		prev = id
		ms := time.UnixMilli(int64(binary.BigEndian.Uint64(u[:8]) >> 16))
		switch k {
		case 0, 3:
			if !ms.Equal(a.Truncate(time.Millisecond)) {
				t.Errorf("id %d %s is of %v, want %v", k, id, ms, a)
			}
		case 4:
			if d := time.Since(ms); d < 0 || d > time.Minute {
				t.Errorf("id %d %s of no time is of %v, not now", k, id, ms)
			}
		}
	}
	ids := make([][]string, 8)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Go(func() {
			for range 1000 {
				ids[g] = append(ids[g], q.next(at))
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, g := range ids {
		if !slices.IsSorted(g) {
			t.Error("a goroutine's ids do not sort in the order made")
		}
		for _, id := range g {
			if seen[id] {
				t.Fatalf("id %s made twice", id)
			}
			seen[id] = true
		}
	}
}

// TestAuditBatchSizes: batches of every size up to two full chunks, rows
// sharing their values or not, are written whole: each row once, as given.
func TestAuditBatchSizes(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "bsz")
		base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		var all []AuditEntry
		for n := 1; n <= 2*auditRowsPerInsert+1; n++ {
			batch := make([]AuditEntry, n)
			for i := range batch {
				k := len(all) + i
				batch[i] = auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", base.Add(time.Duration(k)*time.Millisecond))
				batch[i].Rows, batch[i].RequestID = int64(k), fmt.Sprint("req-", k)
				if n%2 == 0 && i == n/2 {
					batch[i].Identity = "bob" // not shared
				}
			}
			if err := s.AppendAudit(ctx, batch); err != nil {
				t.Fatal(err)
			}
			all = append(all, batch...)
		}
		sameNewestFirst(t, p.ID, auditPages(t, s, p.ID, MaxAuditLimit), all)
	})
}

// auditPages reads a project's whole audit log, newest first, in pages of
// size entries, each after the last id of the one before.
func auditPages(t *testing.T, s *Store, project string, size int) []AuditEntry {
	t.Helper()
	var all []AuditEntry
	for before := ""; ; {
		page := must[[]AuditEntry](t)(s.AuditLog(t.Context(), project, AuditFilter{Limit: size, Before: before}))
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		before = page[len(page)-1].ID
	}
}

// sameNewestFirst fails t unless got is want (in the order written)
// newest first, every field as written.
func sameNewestFirst(t *testing.T, project string, got, want []AuditEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries stored, want %d", project, len(got), len(want))
	}
	for j, e := range got {
		if w := want[len(want)-1-j]; fmt.Sprintf("%#v", e) != fmt.Sprintf("%#v", w) {
			t.Errorf("%s: entry %d reads back as\n%#v\nwant\n%#v", project, len(want)-1-j, e, w)
		}
	}
}

// testDialect is the dialect of the backend the running subtest uses.
func testDialect() dialect {
	if onPostgres() {
		return postgres
	}
	return sqliteDialect
}
