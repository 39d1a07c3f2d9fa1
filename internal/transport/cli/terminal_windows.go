//go:build windows

package cli

import "golang.org/x/sys/windows"

// isTerminal reports whether fd is a console: only a console has a
// console mode (NUL, a pipe or a file does not).
func isTerminal(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}
