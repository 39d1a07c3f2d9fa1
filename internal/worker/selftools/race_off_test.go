//go:build !race

package selftools

const raceEnabled = false
