//go:build race

package selftools

const raceEnabled = true
