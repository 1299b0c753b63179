package intents_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
)

// liveIntentEntries counts, in s, the token intents stored and their
// entries in the caps' indexes: per creator, and per creator and address
// (by "<creator>/<address MAC>").
func liveIntentEntries(t *testing.T, s store.Store) (records, perCreator int, perAddress map[string]int) {
	t.Helper()
	perAddress = map[string]int{}
	for k := range vaulttest.Dump(t, s) {
		parts := strings.SplitN(k, "/", 4)
		switch {
		case len(parts) == 4 && parts[0] == "tenant" && parts[2] == "token_intent":
			records++
		case strings.Contains(k, "/idx/intent-creator/"):
			perCreator++
		case strings.Contains(k, "/idx/intent-creator-addr/"):
			_, rest, _ := strings.Cut(k, "/idx/intent-creator-addr/")
			parts := strings.SplitN(rest, "/", 3)
			perAddress[parts[0]+"/"+parts[1]]++
		}
	}
	return records, perCreator, perAddress
}

func createIntent(e *vaulttest.IntentEnv, c context.Context, key tokenvault.Credential) (*tokenvault.TokenIntent, error) {
	return e.V.CreateTokenIntent(c, key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
}

// TestTokenIntentFloodEvictsOnlyItsOwn: 300 intents created with one
// public key from one address (its cap lowered to 10) leave 10 of that
// address's live, the newest; intents created from other addresses and
// in process before, during and after the flood are all created, kept
// and convertible; the flood's first intent is gone (read, delete and
// convert NotFound) and its audit lines say created, then evicted.
func TestTokenIntentFloodEvictsOnlyItsOwn(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			e := vaulttest.WithIntentApps(t, vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) { o.Limits.MaxPendingTokenIntentsPerAddress = 10 }))
			const cap, flood = 10, 300
			var legit, flooded []*tokenvault.TokenIntent
			other := func(i int) {
				t.Helper()
				for _, c := range []context.Context{vaulttest.From(fmt.Sprint("198.51.100.", i+1)), ctx} {
					in, err := createIntent(e, c, e.Pub.Key)
					if err != nil {
						t.Fatalf("an intent from another address (%d): %v", i, err)
					}
					legit = append(legit, in)
				}
			}
			other(0)
			for i := range flood {
				in, err := createIntent(e, vaulttest.From("203.0.113.66"), e.Pub.Key)
				if err != nil {
					t.Fatalf("flood intent %d: %v", i, err)
				}
				flooded = append(flooded, in)
				if i%50 == 0 {
					other(i/50 + 1)
				}
			}
			other(99)

			records, perCreator, perAddress := liveIntentEntries(t, s)
			if want := cap + len(legit); records != want || perCreator != want {
				t.Errorf("%d intents stored (%d indexed), want %d", records, perCreator, want)
			}
			for a, n := range perAddress {
				if n > cap {
					t.Errorf("address %s holds %d live intents, over the cap of %d", a, n, cap)
				}
			}
			for i, in := range flooded[flood-cap:] {
				if _, err := e.V.GetTokenIntent(vaulttest.From("203.0.113.66"), e.Pub.Key, in.ID); err != nil {
					t.Errorf("newest flood intent %d: %v", i, err)
				}
			}
			first := flooded[0].ID
			_, err := e.V.GetTokenIntent(vaulttest.From("203.0.113.66"), e.Pub.Key, first)
			vaulttest.WantKind(t, "reading an evicted intent", err, tokenvault.NotFound)
			_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: first})
			vaulttest.WantKind(t, "converting an evicted intent", err, tokenvault.NotFound)
			vaulttest.WantKind(t, "deleting an evicted intent", e.V.DeleteTokenIntent(ctx, e.Pub.Key, first), tokenvault.NotFound)
			wantIntentLines(t, e.Env, first, "Token intent created", "Token intent evicted: too many live for its creator and address")
			for i, in := range legit {
				if _, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID}); err != nil {
					t.Errorf("converting legitimate intent %d: %v", i, err)
				}
			}
			if records, perCreator, _ := liveIntentEntries(t, s); records != cap || perCreator != cap {
				t.Errorf("after converting the others, %d intents stored (%d indexed), want the flood's %d", records, perCreator, cap)
			}
		})
	}
}

// TestTokenIntentCapsUnderConcurrency: 200 creations from one address,
// 16 at a time, all succeed and leave exactly the cap live; 200 from 40
// addresses fill the creator's ceiling, each address within its own cap,
// and past the ceiling are refused (RateLimited), never made by evicting
// another address's intents: the first address keeps its five.
func TestTokenIntentCapsUnderConcurrency(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			e := vaulttest.WithIntentApps(t, vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) {
				o.Limits.MaxPendingTokenIntentsPerAddress, o.Limits.MaxPendingTokenIntentsPerApplication = 5, 30
			}))
			counts := vaulttest.Hammer(t, 200, 16, func(int) error {
				_, err := createIntent(e, vaulttest.From("203.0.113.66"), e.Pub.Key)
				return err
			})
			if counts["ok"] != 200 {
				t.Errorf("one address: %v, want 200 ok", counts)
			}
			records, perCreator, before := liveIntentEntries(t, s)
			if records != 5 || perCreator != 5 || len(before) != 1 {
				t.Errorf("one address: %d intents stored, %d indexed, by address %v; want 5", records, perCreator, before)
			}
			counts = vaulttest.Hammer(t, 200, 16, func(i int) error {
				_, err := createIntent(e, vaulttest.From(fmt.Sprint("192.0.2.", i%40)), e.Pub.Key)
				return err
			}, tokenvault.RateLimited)
			if counts["ok"] < 25 || counts["ok"]+counts["rate limited"] != 200 {
				t.Errorf("40 addresses: %v, want at least 25 ok, the others rate limited", counts)
			}
			records, perCreator, perAddress := liveIntentEntries(t, s)
			if records != 30 || perCreator != 30 {
				t.Errorf("40 addresses: %d intents stored (%d indexed), want the creator's ceiling of 30", records, perCreator)
			}
			total := 0
			for a, n := range perAddress {
				total += n
				if n > 5 {
					t.Errorf("address %s holds %d live intents, over the cap of 5", a, n)
				}
			}
			for a := range before {
				if perAddress[a] != 5 {
					t.Errorf("the first address holds %d live intents after the others', want its 5", perAddress[a])
				}
			}
			if total != 30 {
				t.Errorf("%d entries by address, want 30", total)
			}
		})
	}
}

// TestTokenIntentCapsPerCreator: a private application granted
// token-intent:create follows the same caps (in process, without an
// address, its calls share one budget), counted apart from the public
// application's, whose intents it never evicts; so does a session
// granted it, from its client address.
func TestTokenIntentCapsPerCreator(t *testing.T) {
	s := vaulttest.StoreKinds[0].Open(t)
	e := vaulttest.WithIntentApps(t, vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) { o.Limits.MaxPendingTokenIntentsPerAddress = 4 }))
	priv := e.App(t, tokenvault.Private, tokenvault.PermTokenIntentCreate, tokenvault.PermTokenIntentRead)
	var pubs []*tokenvault.TokenIntent
	for range 4 {
		in, err := createIntent(e, ctx, e.Pub.Key)
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, in)
	}
	var privs []*tokenvault.TokenIntent
	for i := range 20 {
		in, err := createIntent(e, ctx, priv.Key)
		if err != nil {
			t.Fatalf("private intent %d: %v", i, err)
		}
		privs = append(privs, in)
	}
	if records, _, _ := liveIntentEntries(t, s); records != 8 {
		t.Errorf("%d intents stored, want 4 of each creator", records)
	}
	for _, in := range pubs {
		if _, err := e.V.GetTokenIntent(ctx, e.Pub.Key, in.ID); err != nil {
			t.Errorf("the public application's intent: %v", err)
		}
	}
	_, err := e.V.GetTokenIntent(ctx, priv.Key, privs[15].ID)
	vaulttest.WantKind(t, "the private application's fifth newest", err, tokenvault.NotFound)
	if _, err := e.V.GetTokenIntent(ctx, priv.Key, privs[16].ID); err != nil {
		t.Errorf("the private application's fourth newest: %v", err)
	}

	sess, err := e.V.CreateSession(vaulttest.From("203.0.113.7"), e.Pub.Key)
	if err != nil {
		t.Fatal(err)
	}
	err = e.V.AuthorizeSession(ctx, priv.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce, Permissions: []string{tokenvault.PermTokenIntentCreate}})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range 10 {
		in, err := createIntent(e, vaulttest.From("203.0.113.7"), sess.SessionKey)
		if err != nil {
			t.Fatalf("session intent %d: %v", i, err)
		}
		if i == 0 {
			first = in.ID
		}
	}
	if _, err := createIntent(e, vaulttest.From("198.51.100.7"), sess.SessionKey); err != nil {
		t.Errorf("a session intent from another address: %v", err)
	}
	if records, _, _ := liveIntentEntries(t, s); records != 13 {
		t.Errorf("%d intents stored, want 4 of each application and 5 of the session", records)
	}
	_, err = e.V.GetTokenIntent(vaulttest.From("203.0.113.7"), sess.SessionKey, first)
	vaulttest.WantKind(t, "the session's evicted intent", err, tokenvault.NotFound)
}
