package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// durationValue is a flag.Value of a time.Duration written as people write
// them: Go's units (30s, 15m, 36h, 1h30m) and days, which Go's have none
// of: 400d, 400 days, 1 day, 1d12h. It prints a whole number of days as
// "400 days", and other durations without their zero units ("1h", not
// "1h0m0s"), so -h shows defaults as an operator would type them.
type durationValue time.Duration

func newDurationValue(p *time.Duration) *durationValue { return (*durationValue)(p) }

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return formatDuration(time.Duration(*d)) }

// errDuration says how a duration is written.
var errDuration = fmt.Errorf("not a duration: write it as 400d (or 400 days), 36h, 15m or 30s")

// parseDuration reads what durationValue takes.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	for _, unit := range []string{" days", " day"} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			return days(strings.TrimSpace(n), "")
		}
	}
	n, rest, ok := strings.Cut(s, "d")
	if !ok {
		return 0, errDuration
	}
	return days(n, rest)
}

// days is n days (digits) and rest (a Go duration, or nothing).
func days(n, rest string) (time.Duration, error) {
	neg := strings.HasPrefix(n, "-")
	k, err := strconv.ParseInt(strings.TrimPrefix(n, "-"), 10, 64)
	if err != nil || k > int64(time.Duration(1<<63-1)/(24*time.Hour)) {
		return 0, errDuration
	}
	d := time.Duration(k) * 24 * time.Hour
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, errDuration
		}
		d += r
	}
	if neg {
		d = -d
	}
	return d, nil
}

// formatDuration writes d as durationValue prints it.
func formatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d != 0 && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
