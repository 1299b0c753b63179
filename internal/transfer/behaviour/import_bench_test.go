package behaviour_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkImportCards imports batches of 1,000 new card tokens (NDJSON
// decoded, validated, created, committed) into a Vault on bbolt (NoSync,
// as every in-process benchmark: bench/import.sh measures the durable
// server); records/s is the import rate.
func BenchmarkImportCards(b *testing.B) {
	v := vaulttest.OpenBenchVault(b, nil)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "importer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenImport, tokenvault.PermTokenCreate}})
	if err != nil {
		b.Fatal(err)
	}
	body := func(batch int) []byte {
		var buf bytes.Buffer
		for i := range 1000 {
			n := batch*1000 + i
			fmt.Fprintf(&buf, `{"id":"%s","type":"card","data":{"number":"%s","expiration_month":%d,"expiration_year":2031},"metadata":{"customer":"c"},"created_at":"2024-01-02T03:04:05Z"}`+"\n",
				uuidOf(n), luhn(fmt.Sprintf("41111111%07d", n)), 1+n%12)
		}
		return buf.Bytes()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src := body(i)
		b.StartTimer()
		batch, err := tokenvault.DecodeImportNDJSON(bytes.NewReader(src), 1)
		if err != nil {
			b.Fatal(err)
		}
		res, err := v.ImportTokens(ctx, app.Key, tokenvault.ImportBatch{Lines: batch.Lines})
		if err != nil || res.Imported != 1000 {
			b.Fatalf("ImportTokens = %d imported, %d rejected (first %+v), %v", res.Imported, res.Rejected, res.Rejects[:min(1, len(res.Rejects))], err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}

// uuidOf is a UUID-shaped id from a hash of n: it carries no digit of
// the card (an id made of n's digits would, and be refused).
func uuidOf(n int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "bench/%d", n))
	s := hex.EncodeToString(h[:16])
	return s[:8] + "-" + s[8:12] + "-4" + s[13:16] + "-a" + s[17:20] + "-" + s[20:32]
}

// luhn appends the check digit to body.
func luhn(body string) string {
	sum := 0
	for k := len(body) - 1; k >= 0; k-- {
		d := int(body[k] - '0')
		if (len(body)-k)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return body + string(rune('0'+(10-sum%10)%10))
}
