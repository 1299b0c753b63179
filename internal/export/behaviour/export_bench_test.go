package export_test

import (
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkExport times the export of a whole tenant on bbolt: its
// tokens (card tokens, as an issuer's vault holds them, and one plain
// token in ten) walked in one snapshot, written as NDJSON, encrypted with
// age and hashed, to io.Discard. It reports tokens/s, MB/s of ciphertext,
// the peak of the live Go heap during the exports above the heap before
// them (flat in the tenant's size: one token and one chunk at a time) and the process's peak
// resident memory (VmHWM, reset after the load; it counts the pages of
// the bbolt file the snapshot maps and reads, which grow with the
// tenant).
//
// It loads 2,000 tokens unless TOKENVAULT_EXPORT_BENCH_TOKENS says how
// many, so that CI's `go test -run XXX -bench . -benchtime=1x ./...` stays
// cheap. The figures of BENCHMARKS.md are for 100,000:
//
//	TOKENVAULT_EXPORT_BENCH_TOKENS=100000 go test -run XXX -bench Export -benchtime 3x -timeout 30m ./internal/export/behaviour
func BenchmarkExport(b *testing.B) {
	total := vaulttest.BenchSize(b, "TOKENVAULT_EXPORT_BENCH_TOKENS", "tokens")
	v := vaulttest.OpenBenchVault(b, nil)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Bench", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		b.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "bench", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
	})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	batch := min(1_000, total)
	for n := 0; n < total; n += batch {
		body := make([]any, batch)
		for i := range body {
			if (n+i)%10 == 9 {
				body[i] = map[string]any{"type": tokenvault.TypeToken, "data": fmt.Sprintf("customer-%08d@example.com", n+i),
					"metadata": map[string]any{"customer": fmt.Sprint(n + i)}}
				continue
			}
			body[i] = map[string]any{"type": tokenvault.TypeCard, "data": map[string]any{"number": luhn(fmt.Sprintf("411111%09d", n+i)),
				"expiration_month": 12, "expiration_year": 2039}}
		}
		if _, err := v.Tokenize(ctx, app.Key, body); err != nil {
			b.Fatal(err)
		}
	}
	vaulttest.Loaded(b, "tokens", total, time.Since(start))
	id, err := age.GenerateX25519Identity()
	if err != nil {
		b.Fatal(err)
	}
	req := tokenvault.ExportRequest{Recipient: id.Recipient().String()}
	heap := sampleHeap()
	b.ResetTimer()
	var m *tokenvault.ExportManifest
	for b.Loop() {
		if m, err = v.ExportTokens(ctx, boot.Application.Key, req, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if m.Count != int64(total) {
		b.Fatalf("exported %d tokens, want %d", m.Count, total)
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(total)/perOp, "tokens/s")
	b.ReportMetric(float64(m.CiphertextSize)/perOp/1e6, "MB/s")
	peak, base := heap()
	b.ReportMetric(float64(peak-base)/(1<<20), "export-heap-MiB")
	vaulttest.ReportPeakRSS(b)
}

// sampleHeap samples the live heap as the last collection found it
// (runtime/metrics, no stop of the world) every 2 ms until the returned
// function is called, which returns the largest sample and the one at
// the start, after a collection: what the loaded vault holds. Their
// difference is what the exports kept live, garbage aside.
func sampleHeap() func() (peak, base uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() (uint64, uint64) { close(done); return <-out, base }
}

// luhn completes the 15 digits of s with a Luhn check digit.
func luhn(s string) string {
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return s + fmt.Sprint((10-sum%10)%10)
}
