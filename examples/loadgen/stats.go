package main

import (
	"slices"
	"time"
)

// latencies summarises recorded request latencies.
type latencies struct {
	P50, P90, P99, Max time.Duration
}

// merge concatenates the per-worker latency lists into one sorted slice.
func merge(perWorker [][]time.Duration) []time.Duration {
	n := 0
	for _, l := range perWorker {
		n += len(l)
	}
	all := make([]time.Duration, 0, n)
	for _, l := range perWorker {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest recorded value such that at least p% of
// the values are less than or equal to it. It is always one of the recorded
// values (no interpolation). Zero for an empty slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// rank = ceil(p/100 * n), computed in integers for p with up to three
	// decimals, so that 99% of 100 values is exactly rank 99.
	pm := int64(p*1000 + 0.5) // p in thousandths of a percent
	rank := int((pm*int64(n) + 100_000 - 1) / 100_000)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// summarize computes the percentiles of sorted.
func summarize(sorted []time.Duration) latencies {
	if len(sorted) == 0 {
		return latencies{}
	}
	return latencies{
		P50: percentile(sorted, 50),
		P90: percentile(sorted, 90),
		P99: percentile(sorted, 99),
		Max: sorted[len(sorted)-1],
	}
}
