package subjects_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkSubjectTokens: what a subject costs a create and a read, on
// bbolt (the data and the subject key store): no subject, a subject
// per token (a new key each), and 10 tokens per subject.
//
//	go test -run XXX -bench SubjectTokens -benchtime 2000x ./internal/subjects/behaviour
func BenchmarkSubjectTokens(b *testing.B) {
	for _, tc := range []struct {
		name    string
		subject func(i int) string
	}{
		{"none", func(int) string { return "" }},
		{"new-subject-each", func(i int) string { return fmt.Sprint("s-", i) }},
		{"10-per-subject", func(i int) string { return fmt.Sprint("s-", i/10) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			keys := openBoltB(b, filepath.Join(dir, "subject-keys.db"))
			defer keys.Close()
			e := vaulttest.NewEnvOn(b, openBoltB(b, filepath.Join(dir, "vault.db")), func(o *tokenvault.Options) { o.SubjectKeys = keys })
			rw := e.Reader(b, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
			ids := make([]string, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				tok, err := e.V.CreateToken(ctx, rw.Key, tokenvault.TokenRequest{Type: "token", Data: "value", Subject: tc.subject(i)})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, tok.ID)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/create")
			b.StartTimer()
			for _, id := range ids {
				if _, err := e.V.GetToken(ctx, rw.Key, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
