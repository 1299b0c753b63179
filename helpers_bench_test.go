package tokenvault

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store/bolt"
)

// The scaffolding of the benchmarks that load a large tenant on bbolt and
// then time pages of it (BenchmarkLogList, BenchmarkTokenList).

// benchSize is how many records such a benchmark loads: 2,000, so that
// CI's `go test -run XXX -bench . -benchtime=1x ./...` stays cheap, unless
// the environment variable env names another number (at least 1,000) of
// what (lines, tokens).
func benchSize(b *testing.B, env, what string) int {
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

// openBenchVault opens a Vault on a bbolt file of b's (NoSync: the
// benchmarks time reads), with the clock now when it is not nil, and
// closes both when b ends.
func openBenchVault(b *testing.B, now func() time.Time) *Vault {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	mk := make([]byte, 32)
	rand.Read(mk)
	v, err := Open(context.Background(), Options{Store: s, Now: now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Keys: KeyOptions{MasterKey: mk}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return v
}

// loaded logs what was loaded and how long it took, and resets the
// process's peak resident set (Linux), so that reportPeakRSS reports the
// pages' peak, not the load's.
func loaded(b *testing.B, what string, n int, took time.Duration) {
	runtime.GC()
	rss := procStatusKB("VmRSS")
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	b.Logf("loaded %d %s in %v; VmRSS after the load %d MiB", n, what, took.Round(time.Millisecond), rss>>10)
}

// reportPeakRSS reports the process's peak resident set since loaded.
func reportPeakRSS(b *testing.B) {
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
