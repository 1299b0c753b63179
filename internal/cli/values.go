package cli

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Flag values that print their defaults as people write them, for -h
// (durations are durationValue, duration.go).

// levelValue is a slog.Level flag that prints as it is written: "info",
// not "INFO". It takes debug, info, warn and error in any case (and
// slog's offsets, such as info+2).
type levelValue slog.Level

func (l *levelValue) Set(s string) error { return (*slog.Level)(l).UnmarshalText([]byte(s)) }

func (l *levelValue) String() string { return strings.ToLower(slog.Level(*l).String()) }

// sizeValue is a number of bytes, written as bytes (262144) or with a
// binary unit: 100MiB, 100 MiB, 64KiB, 1GiB (K, M and G mean the same);
// it prints whole MiB as "100 MiB" rather than 104857600.
type sizeValue int64

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

func (v *sizeValue) String() string { return formatSize(int64(*v)) }

var sizeUnits = []struct {
	names []string
	n     int64
}{{[]string{"gib", "g"}, 1 << 30}, {[]string{"mib", "m"}, 1 << 20}, {[]string{"kib", "k"}, 1 << 10}, {[]string{"b", ""}, 1}}

// parseSize reads what sizeValue takes.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range sizeUnits {
		for _, name := range u.names {
			num, ok := strings.CutSuffix(t, name)
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n > (1<<63-1)/u.n || n < -(1<<63-1)/u.n {
				continue
			}
			return n * u.n, nil
		}
	}
	return 0, fmt.Errorf("not a size: write it in bytes (262144) or as 100MiB, 64KiB or 1GiB")
}

// formatSize writes n as sizeValue prints it.
func formatSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n != 0 && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, map[int64]string{1 << 30: "GiB", 1 << 20: "MiB", 1 << 10: "KiB"}[u.n])
		}
	}
	return strconv.FormatInt(n, 10)
}
