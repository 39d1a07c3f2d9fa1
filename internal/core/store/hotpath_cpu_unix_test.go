//go:build unix

package store_test

import (
	"syscall"
	"testing"
)

// cpuLoop runs f b.N times (b.Loop) and reports, beside the wall time, the
// process's CPU time per op: on a loaded machine (two cores shared with
// other work) the wall time counts the waits for a core, the CPU time
// much less so.
func cpuLoop(b *testing.B, f func()) {
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		f()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
