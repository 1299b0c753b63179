package events_test

import (
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// BenchmarkWebhookEvents measures what events cost the calls that emit
// them, on bbolt with fsync on, from 64 goroutines (concurrent calls share
// commits through store/bolt's group commit, and reads are appended when
// they write nothing but their audit lines):
//
//   - tokenize, with no webhook, and with one subscribed to token.created;
//   - get a token, with no webhook, with one subscribed to "*" (which does
//     not include token.read), and with one subscribed to token.read
//     (each read then commits instead of being appended).
//
// Each case runs on a Vault of its own. docs/webhooks-events.md explains
// the costs; BENCHMARKS.md has figures.
func BenchmarkWebhookEvents(b *testing.B) {
	open := func(b *testing.B, events []string) (*vaulttest.Env, tokenvault.Credential) {
		s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		e := vaulttest.NewEnvOn(b, s)
		if events != nil {
			if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, events, true); err != nil {
				b.Fatal(err)
			}
		}
		return e, e.Reader(b, "reveal", "token:create", "token:read").Key
	}
	parallel := func(b *testing.B, op func() error) {
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for _, c := range []struct {
		name   string
		events []string
	}{{"tokenize/webhooks=none", nil}, {"tokenize/webhooks=token.created", []string{tokenvault.EventTokenCreated}}} {
		b.Run(c.name, func(b *testing.B) {
			e, key := open(b, c.events)
			var n atomic.Int64
			parallel(b, func() error {
				_, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)})
				return err
			})
		})
	}
	for _, c := range []struct {
		name   string
		events []string
	}{{"read/webhooks=none", nil}, {"read/webhooks=*", []string{"*"}}, {"read/webhooks=token.read", []string{tokenvault.EventTokenRead}}} {
		b.Run(c.name, func(b *testing.B) {
			e, key := open(b, c.events)
			tok, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"})
			if err != nil {
				b.Fatal(err)
			}
			parallel(b, func() error {
				_, err := e.V.GetToken(ctx, key, tok.ID)
				return err
			})
		})
	}
}
