//go:build !race

package childproc

const raceEnabled = false
