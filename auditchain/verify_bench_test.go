package auditchain_test

import (
	"bytes"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
)

// BenchmarkVerifyExport verifies the fixture export (both tenants' lines
// and checkpoints, read for tenant A) and reports the cost per line read.
func BenchmarkVerifyExport(b *testing.B) {
	lines, keys := readFixture(b)
	in := bytes.Join(lines, nil)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := auditchain.VerifyExport(bytes.NewReader(in), fixtureTenantA, keys, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines))/1e3, "µs/line")
}
