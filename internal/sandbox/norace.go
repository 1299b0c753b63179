//go:build !race

package sandbox

const raceMemoryFactor = 1
