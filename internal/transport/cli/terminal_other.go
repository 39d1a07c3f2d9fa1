//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package cli

// isTerminal is false where shelldon has no terminal check: input is then
// read as lines, which works for a terminal too (echoed, without editing).
func isTerminal(uintptr) bool { return false }
