//go:build race

package childproc

// raceEnabled: the race detector's shadow memory does not fit under the eval
// child's RLIMIT_DATA, so race-instrumented builds run eval without it.
const raceEnabled = true
