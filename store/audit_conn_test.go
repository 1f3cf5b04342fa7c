package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/fault"
)

// TestAuditFailedBatch: a batch the store refuses (here: an id already
// stored) leaves none of its rows, and the batches after it are written
// whole (on SQLite, on the new connection that replaces the one the batch
// failed on).
func TestAuditFailedBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "fab")
		base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		batch := func(from, n int) []AuditEntry {
			b := make([]AuditEntry, n)
			for i := range b {
				k := from + i
				b[i] = auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", base.Add(time.Duration(k)*time.Millisecond))
				b[i].ID, b[i].RequestID = fmt.Sprintf("0000-%04d", k), fmt.Sprint("req-", k)
			}
			return b
		}
		first := batch(0, 60)
		if err := s.AppendAudit(ctx, first); err != nil {
			t.Fatal(err)
		}
		bad := batch(60, 75)
		bad[70].ID = first[3].ID
		wantKind(t, s.AppendAudit(ctx, bad), fault.Conflict)
		last := batch(200, 57)
		if err := s.AppendAudit(ctx, last); err != nil {
			t.Fatalf("batch after a failed one: %v", err)
		}
		sameNewestFirst(t, p.ID, auditPages(t, s, p.ID, MaxAuditLimit), append(first, last...))
	})
}

// TestAuditConcurrentAppends: batches appended at once by several
// goroutines are each written whole.
func TestAuditConcurrentAppends(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s, _ := newStore(t)
		ctx := t.Context()
		_, p, _ := tenant(t, s, "cap")
		base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		const writers, batches, size = 4, 5, 73
		var wg sync.WaitGroup
		errs := make(chan error, writers*batches)
		for w := range writers {
			wg.Go(func() {
				for b := range batches {
					batch := make([]AuditEntry, size)
					for i := range batch {
						k := (w*batches+b)*size + i
						batch[i] = auditEntry(p.ID, fmt.Sprint("u", w), "pg/public/t", "read", "ok", base.Add(time.Duration(k)*time.Millisecond))
						batch[i].ID = fmt.Sprintf("0000-%05d", k)
					}
					errs <- s.AppendAudit(ctx, batch)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got := auditPages(t, s, p.ID, MaxAuditLimit)
		if len(got) != writers*batches*size {
			t.Fatalf("%d entries stored, want %d", len(got), writers*batches*size)
		}
		for j, e := range got {
			if want := fmt.Sprintf("0000-%05d", len(got)-1-j); e.ID != want {
				t.Fatalf("entry %d is %s, want %s", j, e.ID, want)
			}
		}
	})
}

// TestAuditAfterClose: once the store is closed, AppendAudit fails rather
// than writing on a connection of its own.
func TestAuditAfterClose(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "aac")
	if err := s.AppendAudit(ctx, []AuditEntry{auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", time.Now())}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, []AuditEntry{auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", time.Now())}); err == nil {
		t.Fatal("AppendAudit after Close succeeded")
	}
}

// TestAuditWALBounded: the audit connection leaves SQLite's automatic
// checkpoints as they are (at 1000 pages, about 4 MB): the write-ahead log
// stays under walBound while checkpoints carry the log into the database
// (which grows only by them) past 8 MB.
func TestAuditWALBounded(t *testing.T) {
	t.Setenv(EnvControlDSN, "")
	s, dir := newStore(t)
	ctx := t.Context()
	_, p, _ := tenant(t, s, "wal")
	const walBound = 6 << 20
	base := time.Now().UTC()
	size := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	for k := 0; size(DBFile) < 8<<20; k++ {
		if k > 1000 {
			t.Fatalf("the database is %d bytes after %d batches", size(DBFile), k)
		}
		batch := make([]AuditEntry, auditBatch)
		for i := range batch {
			batch[i] = auditEntry(p.ID, "alice", "pg/public/t", "read", "ok", base.Add(time.Duration(k*auditBatch+i)))
			batch[i].RequestID = fmt.Sprintf("gw-1764628800123456789-%06d", k*auditBatch+i)
		}
		if err := s.AppendAudit(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if wal := size(DBFile + "-wal"); wal > walBound {
			t.Fatalf("the WAL is %d bytes after %d batches (database %d bytes)", wal, k+1, size(DBFile))
		}
	}
}

// TestAuditOrFail: the audit connection's INSERTs check their constraints
// with OR FAIL, not SQLite's default ABORT: no constraint of theirs can
// make SQLite undo the statement alone, so it keeps no statement journal
// for them. EXPLAIN shows each check's conflict resolution as the P2 of
// HaltIfNull and Halt (2 abort, 3 fail).
func TestAuditOrFail(t *testing.T) {
	t.Setenv(EnvControlDSN, "")
	s, _ := newStore(t)
	ctx := t.Context()
	for _, c := range auditChunks {
		for _, q := range []string{c.insert, c.shared} {
			if q == "" {
				continue
			}
			rows, err := s.db.QueryContext(ctx, "EXPLAIN "+auditOrFail(q), make([]any, strings.Count(q, "?"))...)
			if err != nil {
				t.Fatal(err)
			}
			checks := 0
			for rows.Next() {
				var addr, p1, p2, p3 int64
				var op string
				var p4, p5, comment any
				if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
					t.Fatal(err)
				}
				if op == "HaltIfNull" || op == "Halt" && p1 != 0 {
					checks++
					if p2 != 3 {
						t.Errorf("the %d-row INSERT: %d %s resolves a conflict by %d, want 3 (fail)", c.n, addr, op, p2)
					}
				}
			}
			rows.Close()
			if checks < 14 {
				t.Errorf("the %d-row INSERT checks %d constraints, want at least 14", c.n, checks)
			}
		}
	}
}
