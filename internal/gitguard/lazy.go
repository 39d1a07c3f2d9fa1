package gitguard

import "sync"

// lazy is a value built on first use. The package's tables are built this
// way rather than at package init, and rather than by a package-level
// sync.OnceValue, which is itself a call made at init: with no init code at
// all, a process that checks no git command (every process of the binary
// but the worker running one, the idle daemon included) never runs or
// faults in any of the package (BenchmarkDaemonIdleRSS).
type lazy[T any] struct {
	once sync.Once
	v    T
}

// get returns the value, built by build the first time.
func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
