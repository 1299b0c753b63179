package export_test

import (
	"fmt"
	"io"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkExport times the export of a whole tenant on bbolt: its
// tokens (card tokens, as an issuer's vault holds them, and one plain
// token in ten) walked in one snapshot, written as NDJSON, encrypted with
// age and hashed, to io.Discard. It reports tokens/s, MB/s of ciphertext
// and the process's peak resident memory during the exports (VmHWM, reset
// after the load): flat in the tenant's size.
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
	vaulttest.ReportPeakRSS(b)
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
