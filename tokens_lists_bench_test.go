package tokenvault

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// BenchmarkTokenList times token list pages in a tenant of many tokens on
// bbolt: the first page, a page by cursor from the middle of the list,
// and pages filtered by type (a type with a few tokens, and one with
// none), 20 tokens a page. It reports the process's peak resident memory
// while the pages are served (VmHWM, reset after the load) beside the Go
// allocations of a page.
//
// It loads 2,000 tokens unless TOKENVAULT_LIST_BENCH_TOKENS says how many,
// so that CI's `go test -run XXX -bench . -benchtime=1x ./...` stays
// cheap. The figures of the issue are for a million:
//
//	TOKENVAULT_LIST_BENCH_TOKENS=1000000 go test -run XXX -bench TokenList -benchtime 2s -timeout 30m .
func BenchmarkTokenList(b *testing.B) {
	total := 2_000
	if s := os.Getenv("TOKENVAULT_LIST_BENCH_TOKENS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("TOKENVAULT_LIST_BENCH_TOKENS=%q: want a number of tokens, at least 1000", s)
		}
		total = n
	}
	ctx := context.Background()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	mk := make([]byte, 32)
	rand.Read(mk)
	v, err := Open(ctx, Options{Store: s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Keys: KeyOptions{MasterKey: mk}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Bench", Owner: User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		b.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{
		Name: "bench", Type: Private, Permissions: []string{PermTokenCreate, PermTokenRead},
	})
	if err != nil {
		b.Fatal(err)
	}
	batch := min(10_000, total)
	var middle string
	start := time.Now()
	for n := 0; n < total; n += batch {
		body := make([]any, batch)
		for i := range body {
			body[i] = fmt.Sprintf("value-%08d", n+i)
		}
		out, err := v.Tokenize(ctx, app.Key, body)
		if err != nil {
			b.Fatal(err)
		}
		if n <= total/2 && total/2 < n+batch {
			middle = out.([]any)[total/2-n].(string)
		}
		card := TokenRequest{Type: TypeCard, Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039}}
		if _, err := v.CreateToken(ctx, app.Key, card); err != nil {
			b.Fatal(err)
		}
	}
	load := time.Since(start)
	mid, err := v.GetToken(ctx, app.Key, middle)
	if err != nil {
		b.Fatal(err)
	}
	cursor := encodeCursor(barrier.TimeKey(mid.CreatedAt) + "/" + mid.ID)
	runtime.GC()
	rssBefore := procStatusKB("VmRSS")
	// Reset the peak resident set (Linux): what follows is the pages'.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	b.Logf("loaded %d tokens in %v; VmRSS after the load %d MiB", total, load.Round(time.Millisecond), rssBefore>>10)

	for _, bc := range []struct {
		name string
		req  ListTokensRequest
		want int
	}{
		{"first", ListTokensRequest{}, DefaultPageSize},
		{"cursor-middle", ListTokensRequest{PageRequest: PageRequest{Start: cursor}}, DefaultPageSize},
		{"type-card", ListTokensRequest{Type: TypeCard}, min(DefaultPageSize, (total+batch-1)/batch)},
		{"type-bank-none", ListTokensRequest{Type: TypeBank}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, err := v.ListTokens(ctx, app.Key, bc.req)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Data) != bc.want {
					b.Fatalf("%d tokens, want %d", len(page.Data), bc.want)
				}
			}
			if hwm := procStatusKB("VmHWM"); hwm > 0 {
				b.ReportMetric(float64(hwm>>10), "peak-RSS-MiB")
			}
		})
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
