package vaulttest_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// TestMillionTokensRSS loads one million tokens into bbolt and reports the
// process's resident memory while serving gets. It takes minutes, so it runs
// only on request:
//
//	TOKENVAULT_MEMTEST=1 go test -run TestMillionTokensRSS -v -timeout 30m .
func TestMillionTokensRSS(t *testing.T) {
	if os.Getenv("TOKENVAULT_MEMTEST") == "" {
		t.Skip("set TOKENVAULT_MEMTEST=1 to load a million tokens and measure RSS")
	}
	s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e := vaulttest.NewEnvOn(t, s)
	creator := e.App(t, tokenvault.Private, "token:create")
	reader := e.Reader(t, "reveal", "token:read")
	const total, batch = 1_000_000, 10_000
	var sample []string
	start := time.Now()
	for n := 0; n < total; n += batch {
		body := make([]any, batch)
		for i := range body {
			body[i] = fmt.Sprintf("value-%08d", n+i)
		}
		out, err := e.V.Tokenize(ctx, creator.Key, body)
		if err != nil {
			t.Fatal(err)
		}
		ids := out.([]any)
		for i := 0; i < len(ids); i += 1000 {
			sample = append(sample, ids[i].(string))
		}
	}
	t.Logf("loaded %d tokens in %v (%.0f tokens/s)", total, time.Since(start), total/time.Since(start).Seconds())
	runtime.GC()
	gets := 0
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		id := sample[rand.IntN(len(sample))]
		if _, err := e.V.GetToken(ctx, reader.Key, id); err != nil {
			t.Fatal(err)
		}
		gets++
	}
	status := procStatus(t)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fi, _ := os.Stat(s.Path())
	t.Logf("after %d gets: VmRSS %d MiB = RssAnon %d MiB + RssFile %d MiB; Go heap in use %d MiB; database file %d MiB",
		gets, status["VmRSS"]>>20, status["RssAnon"]>>20, status["RssFile"]>>20, ms.HeapInuse>>20, fi.Size()>>20)
	// RssFile is bbolt's read-only mmap of the database: clean page cache
	// the kernel reclaims under pressure. The process's own memory is
	// RssAnon.
	if status["RssAnon"] > 200<<20 {
		t.Errorf("RssAnon %d MiB, target under 200 MiB", status["RssAnon"]>>20)
	}
}

// procStatus reads the memory lines of /proc/self/status, in bytes.
func procStatus(t *testing.T) map[string]int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(rest, " kB") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		out[name] = kb << 10
	}
	return out
}
