// Package lazy holds values built on first use.
//
// Package-level tables (regexps, maps, replacers) are built this way rather
// than in a package-level var, which is init code run by every process of
// the binary, and rather than by a package-level sync.OnceValue, which is
// itself a call made at init. A package with no init code at all is never
// run, nor faulted in, by a process that does not use it: the kernel maps
// 64 KiB of the binary around each page fault, so any init code costs the
// idle daemon the pages around it (BenchmarkDaemonIdleRSS). A Value's zero
// value is ready to use, so it needs no initializer.
package lazy

import "sync"

// Value is a value of type T built by the first Get.
type Value[T any] struct {
	once sync.Once
	v    T
}

// Get returns the value, built by build the first time Get is called; later
// calls, and concurrent ones, return that same value without calling build.
func (l *Value[T]) Get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
