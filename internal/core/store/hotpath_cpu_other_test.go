//go:build !unix

package store_test

import "testing"

// cpuLoop runs f b.N times (b.Loop); the CPU time is reported on unix only.
func cpuLoop(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}
