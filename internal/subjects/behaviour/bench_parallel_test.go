package subjects_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// BenchmarkSubjectTokensParallel is BenchmarkSubjectTokens' creates from
// 8 goroutines per CPU on stores that sync (as the server opens them):
// what a new subject's key store commit costs the data store's group
// commit.
//
//	go test -run XXX -bench SubjectTokensParallel -benchtime 3000x ./internal/subjects/behaviour
func BenchmarkSubjectTokensParallel(b *testing.B) {
	for _, tc := range []struct {
		name    string
		subject func(i int64) string
	}{
		{"none", func(int64) string { return "" }},
		{"new-subject-each", func(i int64) string { return fmt.Sprint("s-", i) }},
		{"10-per-subject", func(i int64) string { return fmt.Sprint("s-", i/10) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			keys, err := bolt.Open(filepath.Join(dir, "subject-keys.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer keys.Close()
			data, err := bolt.Open(filepath.Join(dir, "vault.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			e := vaulttest.NewEnvOn(b, data, func(o *tokenvault.Options) { o.SubjectKeys = keys })
			rw := e.Reader(b, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, err := e.V.CreateToken(ctx, rw.Key, tokenvault.TokenRequest{Type: "token", Data: "value", Subject: tc.subject(i)}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
