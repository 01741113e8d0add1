package agent

import (
	"syscall"
	"testing"
	"time"
)

// cpuPerOp starts measuring the process's user+system CPU time; the
// returned func reports it per op as cpu-µs/op, which a shared machine
// disturbs less than ns/op (issue 17). Call it after ResetTimer.
func cpuPerOp(b *testing.B) func() {
	start := cpuNow()
	return func() {
		b.ReportMetric(float64(cpuNow()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
