package main

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// series is 1ms, 2ms, …, n ms.
func series(n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = ms(i + 1)
	}
	return s
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value p50", []time.Duration{ms(7)}, 50, ms(7)},
		{"one value p99", []time.Duration{ms(7)}, 99, ms(7)},
		{"100 p50", series(100), 50, ms(50)},
		{"100 p90", series(100), 90, ms(90)},
		{"100 p99", series(100), 99, ms(99)},
		{"100 p100", series(100), 100, ms(100)},
		{"10 p50", series(10), 50, ms(5)},
		{"10 p90", series(10), 90, ms(9)},
		{"10 p99 rounds up to the max", series(10), 99, ms(10)},
		{"1000 p99", series(1000), 99, ms(990)},
		{"1000 p99.9", series(1000), 99.9, ms(999)},
		{"3 p50 rounds up", series(3), 50, ms(2)},
		{"4 p50", series(4), 50, ms(2)},
		{"tiny p is the min", series(1000), 0.01, ms(1)},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestMergeAndSummarize(t *testing.T) {
	// 1..100 ms spread unevenly and out of order over three workers.
	var a, b, c []time.Duration
	for i := 100; i >= 1; i-- {
		switch {
		case i%7 == 0:
			a = append(a, ms(i))
		case i%2 == 0:
			b = append(b, ms(i))
		default:
			c = append(c, ms(i))
		}
	}
	all := merge([][]time.Duration{a, nil, b, c})
	if len(all) != 100 {
		t.Fatalf("merged %d values, want 100", len(all))
	}
	for i, d := range all {
		if d != ms(i+1) {
			t.Fatalf("merged[%d] = %v, want %v (not sorted)", i, d, ms(i+1))
		}
	}
	got := summarize(all)
	want := latencies{P50: ms(50), P90: ms(90), P99: ms(99), Max: ms(100)}
	if got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
	if got := summarize(nil); got != (latencies{}) {
		t.Errorf("summarize(nil) = %+v, want zero", got)
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234567 * time.Nanosecond:    "1.23ms",
		123456 * time.Nanosecond:     "123µs",
		999 * time.Nanosecond:        "999ns",
		5012345678 * time.Nanosecond: "5.01s",
		0:                            "0s",
	} {
		if got := short(d).String(); got != want {
			t.Errorf("short(%d) = %s, want %s", int64(d), got, want)
		}
	}
}
