package vaulttest

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// The scaffolding of the benchmarks that load a large tenant on bbolt and
// then time pages of it (BenchmarkLogList): how much to load, a Vault on
// a file of the benchmark's, and the peak memory of the pages alone.

// BenchSize is how many records such a benchmark loads: 2,000, so that
// CI's `go test -run XXX -bench . -benchtime=1x ./...` stays cheap, unless
// the environment variable env names another number (at least 1,000) of
// what (lines, tokens).
func BenchSize(b *testing.B, env, what string) int {
	b.Helper()
	s := os.Getenv(env)
	if s == "" {
		return 2_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1000 {
		b.Fatalf("%s=%q: want a number of %s, at least 1000", env, s, what)
	}
	return n
}

// OpenBenchVault opens a Vault on a bbolt file of b's (NoSync: the
// benchmarks time reads), with the clock now when it is not nil, and
// closes both when b ends.
func OpenBenchVault(b *testing.B, now func() time.Time) *tokenvault.Vault {
	b.Helper()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: s, Now: now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Keys:   tokenvault.KeyOptions{MasterKey: NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return v
}

// Loaded logs what was loaded and how long it took, and resets the
// process's peak resident set (Linux), so that ReportPeakRSS reports the
// pages' peak, not the load's.
func Loaded(b *testing.B, what string, n int, took time.Duration) {
	b.Helper()
	runtime.GC()
	rss := procStatusKB("VmRSS")
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	b.Logf("loaded %d %s in %v; VmRSS after the load %d MiB", n, what, took.Round(time.Millisecond), rss>>10)
}

// ReportPeakRSS reports the process's peak resident set since Loaded.
func ReportPeakRSS(b *testing.B) {
	if hwm := procStatusKB("VmHWM"); hwm > 0 {
		b.ReportMetric(float64(hwm>>10), "peak-RSS-MiB")
	}
}

// procStatusKB reads a line of /proc/self/status, in KiB: 0 where there
// is none.
func procStatusKB(name string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
