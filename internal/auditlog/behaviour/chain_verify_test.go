package auditlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestVerifyAuditChainNotFound: an unknown tenant, a malformed id and a
// deleted tenant are NotFound, not an empty report.
func TestVerifyAuditChainNotFound(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	other := e.Tenant(t, "Gone")
	if err := e.V.DeleteTenant(ctx, other.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"01b8e094-0000-7000-8000-000000000000", "not an id", "", other.Tenant.ID} {
		_, err := e.V.VerifyAuditChain(ctx, id)
		vaulttest.WantKind(t, "VerifyAuditChain("+id+")", err, tokenvault.NotFound)
	}
}

// TestVerifyAuditChainLong walks a chain of several read transactions'
// worth of index entries and log keys (chainVerifyBatch is 1,000), and
// finds a problem in the second batch and one in the third at their
// exact sequence numbers.
func TestVerifyAuditChainLong(t *testing.T) {
	f := newChainFixture(t, tamperStores[0].open, 1)
	if err := vaulttest.LogLines(context.Background(), f.e.V, f.tid, 2500, 700); err != nil {
		t.Fatal(err)
	}
	f.layout(t)
	if f.head < 2500 {
		t.Fatalf("%d lines", f.head)
	}
	f.kv.del(t, f.indexKey(1500, f.suffix[1500]))
	v := f.kv.get(t, f.lineKey(2200))
	v[len(v)-1] ^= 0x80
	f.kv.put(t, f.lineKey(2200), v)
	wantProblems(t, f.verify(t),
		auditchain.Problem{Kind: auditchain.Missing, Seq: 1500, LineID: f.id(1500)},
		auditchain.Problem{Kind: auditchain.Altered, Seq: 2200, LineID: f.id(2200)})
}

// BenchmarkVerifyAuditChain verifies an untouched chain (checkpoints
// every 1,000 lines, as by default; maybe an unsigned tail) of
// TOKENVAULT_BENCH_CHAIN_LINES lines (20,000 unless set; the figure in
// BENCHMARKS.md is of 1,000,000), on each store, and reports the time
// per line. The chain is written before the timer starts, in commits of
// 1,000 lines.
//
//	TOKENVAULT_BENCH_CHAIN_LINES=1000000 go test -run '^$' -bench BenchmarkVerifyAuditChain -benchtime 1x -timeout 1h .
func BenchmarkVerifyAuditChain(b *testing.B) {
	lines := 20000
	if s := os.Getenv("TOKENVAULT_BENCH_CHAIN_LINES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("TOKENVAULT_BENCH_CHAIN_LINES=%q", s)
		}
		lines = n
	}
	for _, sk := range []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(*testing.B) store.Store { return memory.New() }},
		{"bolt", func(b *testing.B) store.Store {
			s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	} {
		b.Run(sk.name, func(b *testing.B) {
			e := vaulttest.NewEnvOn(b, sk.open(b))
			ctx := context.Background()
			start := time.Now()
			if err := vaulttest.LogLines(ctx, e.V, e.Boot.Tenant.ID, lines, 1000); err != nil {
				b.Fatal(err)
			}
			b.Logf("wrote %d lines in %v", lines, time.Since(start))
			b.ResetTimer()
			for b.Loop() {
				r, err := e.V.VerifyAuditChain(ctx, e.Boot.Tenant.ID)
				if err != nil {
					b.Fatal(err)
				}
				if r.Lines < lines {
					b.Fatalf("report: %d lines", r.Lines)
				}
				for _, p := range r.Problems {
					if p.Kind != auditchain.UnsignedTail {
						b.Fatalf("untouched chain: %v", p)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
		})
	}
}

// TestVerifyAuditChainWhileWriting verifies again and again while other
// goroutines create and read tokens (reads appended on bbolt, chained by
// the linker meanwhile): lines written during a walk are after the
// head it read, never reported, and nothing else is wrong but the
// unsigned tail.
func TestVerifyAuditChainWhileWriting(t *testing.T) {
	f := newChainFixture(t, tamperStores[0].open, 1)
	ctx := context.Background()
	app := f.e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				tok, err := f.e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(g, i)})
				if err == nil {
					_, err = f.e.V.GetToken(ctx, app.Key, tok.ID)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 15 {
		r := f.verify(t)
		for _, p := range r.Problems {
			if p.Kind != auditchain.UnsignedTail {
				t.Errorf("while writing: %v", p)
			}
		}
	}
	close(done)
	wg.Wait()
}
