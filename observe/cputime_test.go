package observe

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time of the process, every thread's (the collector's
// too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time of the process per operation since start
// (cpuTime) as cpu-ns/op: on a machine other work shares, it moves less
// than ns/op, which counts the waits for a core too.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
