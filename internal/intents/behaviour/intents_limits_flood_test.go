package intents_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTokenIntentFloodFromManyAddressesKeepsVictims: a flood of intents
// from addresses A..Z (26 addresses, 50 each, one public key) never
// removes a victim's pending intents, and the victim can still create
// one; with a ceiling the flood fills, the flood's creations past it are
// refused (RateLimited, with when to try again) and still nobody's
// pending intent is evicted, the victim's included.
func TestTokenIntentFloodFromManyAddressesKeepsVictims(t *testing.T) {
	const victim = "198.51.100.7"
	for _, tc := range []struct {
		name    string
		ceiling int
	}{{"ceiling above the flood's share", 0}, {"ceiling the flood fills", 40}} {
		t.Run(tc.name, func(t *testing.T) {
			s := vaulttest.StoreKinds[0].Open(t)
			e := vaulttest.WithIntentApps(t, vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) {
				o.Limits.MaxPendingTokenIntentsPerAddress, o.Limits.MaxPendingTokenIntentsPerApplication = 5, tc.ceiling
			}))
			var pending []*tokenvault.TokenIntent
			for range 3 {
				in, err := createIntent(e, vaulttest.From(victim), e.Pub.Key)
				if err != nil {
					t.Fatal(err)
				}
				pending = append(pending, in)
			}
			refused := 0
			for a := range 26 {
				for i := range 50 {
					_, err := createIntent(e, vaulttest.From(fmt.Sprint("203.0.113.", a+1)), e.Pub.Key)
					if tc.ceiling == 0 && err != nil {
						t.Fatalf("flood intent %d from address %c: %v", i, 'A'+a, err)
					}
					if err != nil {
						vaulttest.WantKind(t, "a flood intent past the ceiling", err, tokenvault.RateLimited)
						var te *tokenvault.Error
						if vaulttest.AsError(err, &te); te.RetryAfter <= 0 || te.RetryAfter > tokenvault.DefaultTokenIntentLifetime {
							t.Fatalf("RetryAfter = %v, want until the oldest intent expires", te.RetryAfter)
						}
						refused++
					}
				}
			}
			if (refused > 0) != (tc.ceiling > 0) {
				t.Errorf("%d flood intents refused with ceiling %d", refused, tc.ceiling)
			}
			for i, in := range pending {
				if _, err := e.V.GetTokenIntent(vaulttest.From(victim), e.Pub.Key, in.ID); err != nil {
					t.Errorf("the victim's pending intent %d after the flood: %v", i, err)
				}
			}
			records, _, perAddress := liveIntentEntries(t, s)
			for a, n := range perAddress {
				if n > 5 {
					t.Errorf("address %s holds %d live intents, over its cap of 5", a, n)
				}
			}
			_, err := createIntent(e, vaulttest.From(victim), e.Pub.Key)
			if tc.ceiling == 0 {
				if err != nil {
					t.Errorf("the victim creating an intent after the flood: %v", err)
				}
				return
			}
			// At the ceiling the victim waits as everyone does: refused, its
			// pending intents kept; once the flood's intents expire it creates.
			if records != tc.ceiling {
				t.Errorf("%d intents live, want the ceiling %d", records, tc.ceiling)
			}
			vaulttest.WantKind(t, "the victim creating at the ceiling", err, tokenvault.RateLimited)
			for i, in := range pending {
				if _, err := e.V.GetTokenIntent(vaulttest.From(victim), e.Pub.Key, in.ID); err != nil {
					t.Errorf("the victim's pending intent %d after a refused creation: %v", i, err)
				}
			}
			e.Clock.Advance(tokenvault.DefaultTokenIntentLifetime + time.Second)
			if _, err := createIntent(e, vaulttest.From(victim), e.Pub.Key); err != nil {
				t.Errorf("the victim creating once the flood's intents expired: %v", err)
			}
		})
	}
}
