//go:build race

package sandbox

// raceMemoryFactor widens a worker's memory limit in race builds (tests),
// where the race detector maps shadow memory several times the heap.
const raceMemoryFactor = 8
