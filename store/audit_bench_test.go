package store

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppendAudit writes the audit entries of a busy second as the
// AuditWriter does: batches of auditBatch, then the rest (575 in all, the
// entries of about 100 ms of 1-row reads at 5,750 requests a second).
// ns/row is the time of one row, cpu-ns/row the CPU time of the process
// per row (what the writer takes from requests on a busy machine).
func BenchmarkAppendAudit(b *testing.B) { benchAppendAudit(b, 575, auditBatch) }

// BenchmarkAppendAuditLight writes the audit entries of a lighter load:
// batches of 49 (about 100 ms of 1-row reads at 490 requests a second),
// the rest of a full chunk.
func BenchmarkAppendAuditLight(b *testing.B) { benchAppendAudit(b, 49, 49) }

// benchAppendAudit appends n entries of one principal and table a round,
// in batches of batch.
func benchAppendAudit(b *testing.B, n, batch int) {
	b.Setenv(EnvMasterKey, "")
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	base := time.Now().UTC()
	entries := make([]AuditEntry, n)
	b.ReportAllocs()
	rows := 0
	var cpu time.Duration
	for b.Loop() {
		for i := range entries {
			e := auditEntry("0192f3a4-1b7e-7d6b-9f3a-3f1c2b7a9e10", "analyst", "pg/minimal_bench/items", "read", "ok", base.Add(time.Duration(rows+i)))
			e.RequestID = "gw-1764628800123456789-000123"
			entries[i] = e
		}
		c0 := cpuTime()
		for start := 0; start < n; start += batch {
			if err := s.AppendAudit(ctx, entries[start:min(start+batch, n)]); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - c0
		rows += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
}

// BenchmarkAuditID makes the id of an audit entry as Record does (newID:
// what it did before idSeq).
func BenchmarkAuditID(b *testing.B) {
	at := time.Now()
	b.Run("idSeq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = auditIDs.next(at)
		}
	})
	b.Run("newID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = newID()
		}
	})
}

// BenchmarkAuditRecord queues entries as a request's audit does
// (AuditWriter.Record, with the entry's id to make), the queue drained by
// the benchmark rather than written.
func BenchmarkAuditRecord(b *testing.B) {
	w := &AuditWriter{q: make(chan AuditEntry, 1024)}
	e := auditEntry("0192f3a4-1b7e-7d6b-9f3a-3f1c2b7a9e10", "analyst", "pg/minimal_bench/items", "read", "ok", time.Now().UTC())
	e.RequestID = "gw-1764628800123456789-000123"
	b.ReportAllocs()
	for b.Loop() {
		if !w.Record(e) {
			b.Fatal("entry dropped")
		}
		if len(w.q) == cap(w.q) {
			for range cap(w.q) {
				<-w.q
			}
		}
	}
}
