package intents_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestTokenIntentCreate: a public key (granted only token:create) creates
// an intent; the answer summarises the card (bin, last four, expiration,
// brand), carries the default expiry of one day, never the data and,
// to the public key, no fingerprint; a key that may read cards sees the
// fingerprint, equal to a token's of the same card.
func TestTokenIntentCreate(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	want := tokenvault.CardDetails{Bin: "42424242", Last4: "4242", ExpirationMonth: 12, ExpirationYear: 2035, Brand: tokenvault.BrandVisa}
	if in.Card == nil || *in.Card != want {
		t.Errorf("card = %+v, want %+v", in.Card, want)
	}
	if got, want := in.ExpiresAt, e.Clock.Now().Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("expires_at = %v, want %v", got, want)
	}
	b, _ := json.Marshal(in)
	if strings.Contains(string(b), "4242424242424242") || strings.Contains(string(b), `"123"`) || strings.Contains(string(b), `"data"`) {
		t.Errorf("the intent shows its data: %s", b)
	}
	tok, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	if in.Fingerprint != "" {
		t.Errorf("the public key was shown the intent's fingerprint %q", in.Fingerprint)
	}
	got, err := e.V.GetTokenIntent(ctx, e.Pub.Key, in.ID)
	if err != nil || got.ID != in.ID || *got.Card != want || got.Fingerprint != "" {
		t.Errorf("GetTokenIntent by its creator = %+v, %v; want the card, no fingerprint", got, err)
	}
	// A key that reads cards in clear sees the fingerprint a token of the
	// card gets, to tell a card it holds; one that reads them masked does
	// not.
	masker := e.App(t, tokenvault.Private, tokenvault.PermTokenRead, tokenvault.PermTokenIntentRead)
	if got, err := e.V.GetTokenIntent(ctx, masker.Key, in.ID); err != nil || got.Fingerprint != "" {
		t.Errorf("GetTokenIntent by a masking reader = %+v, %v; want no fingerprint", got, err)
	}
	reader := e.Revealer(t, tokenvault.PermTokenRead, tokenvault.PermTokenIntentRead)
	got, err = e.V.GetTokenIntent(ctx, reader.Key, in.ID)
	if err != nil || got.Fingerprint == "" || got.Fingerprint != tok.Fingerprint {
		t.Errorf("GetTokenIntent by a reader = %+v, %v; want the token's fingerprint %q", got, err, tok.Fingerprint)
	}
}

// TestTokenIntentHostile: every way to misuse an intent is refused with
// its kind: a bad type or data, expires_at past 48 hours or in the past,
// reading or deleting another key's intent, another tenant's id, an
// expired intent, a management key.
func TestTokenIntentHostile(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	req := tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()}
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]tokenvault.TokenIntentRequest{
		"unknown type":    {Type: "cheque", Data: "x"},
		"bad card number": {Type: tokenvault.TypeCard, Data: map[string]any{"number": "4242424242424241", "expiration_month": 1, "expiration_year": 2035}},
		"expired card":    {Type: tokenvault.TypeCard, Data: map[string]any{"number": "4242424242424242", "expiration_month": 1, "expiration_year": 2020}},
		"over 48 hours":   {Type: tokenvault.TypeCard, Data: vaulttest.IntentCard(), ExpiresAt: ptrTime(e.Clock.Now().Add(48*time.Hour + time.Second))},
		"in the past":     {Type: tokenvault.TypeCard, Data: vaulttest.IntentCard(), ExpiresAt: ptrTime(e.Clock.Now().Add(-time.Second))},
	}
	for name, r := range bad {
		_, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, r)
		vaulttest.WantKind(t, name, err, tokenvault.Invalid)
	}
	at48 := e.Clock.Now().Add(48 * time.Hour)
	if long, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "v", ExpiresAt: &at48}); err != nil || !long.ExpiresAt.Equal(at48) || long.Card != nil {
		t.Errorf("an intent of exactly 48 hours = %+v, %v", long, err)
	}
	_, err = e.V.CreateTokenIntent(ctx, e.Mgmt, req)
	vaulttest.WantKind(t, "CreateTokenIntent with a management key", err, tokenvault.PermissionDenied)

	// Another public key of the tenant, and the private key without
	// token-intent:read, are not the creator.
	other := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
	_, err = e.V.GetTokenIntent(ctx, other.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent by another public key", err, tokenvault.NotFound)
	vaulttest.WantKind(t, "DeleteTokenIntent by another public key", e.V.DeleteTokenIntent(ctx, other.Key, in.ID), tokenvault.NotFound)
	_, err = e.V.GetTokenIntent(ctx, e.Priv.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent by a private key without token-intent:read", err, tokenvault.PermissionDenied)
	reader := e.App(t, tokenvault.Private, tokenvault.PermTokenIntentRead)
	if _, err := e.V.GetTokenIntent(ctx, reader.Key, in.ID); err != nil {
		t.Errorf("GetTokenIntent with token-intent:read: %v", err)
	}
	vaulttest.WantKind(t, "DeleteTokenIntent with token-intent:read only", e.V.DeleteTokenIntent(ctx, reader.Key, in.ID), tokenvault.PermissionDenied)

	// Another tenant's keys never reach it, to read or to convert.
	boot := e.Tenant(t, "Other")
	pub2, err := e.V.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "p", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	priv2, err := e.V.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "q", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenIntentRead}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.GetTokenIntent(ctx, pub2.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent from another tenant", err, tokenvault.NotFound)
	_, err = e.V.GetTokenIntent(ctx, priv2.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent from another tenant with token-intent:read", err, tokenvault.NotFound)
	_, err = e.V.CreateToken(ctx, priv2.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
	vaulttest.WantKind(t, "converting another tenant's intent", err, tokenvault.NotFound)

	// Expired: refused at once, then swept, with its line.
	e.Clock.Advance(24 * time.Hour)
	_, err = e.V.GetTokenIntent(ctx, e.Pub.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent of an expired intent", err, tokenvault.NotFound)
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
	vaulttest.WantKind(t, "converting an expired intent", err, tokenvault.NotFound)
	if n, err := e.V.Sweep(ctx); err != nil || n < 1 {
		t.Errorf("Sweep = %d, %v; want the expired intent swept", n, err)
	}
	wantIntentLines(t, e.Env, in.ID, "Token intent created", "Token intent read", "Token intent expired")
}

func ptrTime(t time.Time) *time.Time { return &t }

// wantIntentLines checks the audit lines of intent id, in order.
func wantIntentLines(t *testing.T, e *vaulttest.Env, id string, want ...string) {
	t.Helper()
	page, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTokenIntent, EntityID: id})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range page.Data {
		got = append(got, l.Message)
	}
	slices.Reverse(got) // newest first
	if !slices.Equal(got, want) {
		t.Errorf("intent %s lines = %q, want %q", id, got, want)
	}
}

// TestTokenIntentConvert: a private key converts an intent with
// CreateToken, its own fields kept; the token has the card without its
// cvc; the intent is gone (a second conversion is NotFound) and its lines
// say created, converted. A public key cannot convert; a request with
// type or data besides the intent id is Invalid.
func TestTokenIntentConvert(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.CreateToken(ctx, e.Pub.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
	vaulttest.WantKind(t, "a public key converting", err, tokenvault.PermissionDenied)
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID, Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	vaulttest.WantKind(t, "converting with type and data", err, tokenvault.Invalid)
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID, Containers: []string{"/pci/"}, SearchIndexes: []string{"{{ data.cvc }}"}})
	vaulttest.WantKind(t, "a search index over the cvc an intent does not carry", err, tokenvault.Invalid)

	tok, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID, ID: "card-of-ada",
		Metadata: map[string]string{"customer": "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.ID != "card-of-ada" || tok.Type != tokenvault.TypeCard || tok.Metadata["customer"] != "ada" || tok.Fingerprint == "" {
		t.Errorf("converted token = %+v", tok)
	}
	read, err := e.V.GetToken(ctx, e.Priv.Key, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := read.Data.(map[string]any)
	if data["number"] != "4242424242424242" || data["cvc"] != nil {
		t.Errorf("converted data = %v, want the card without its cvc", tok.Data)
	}
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
	vaulttest.WantKind(t, "converting twice", err, tokenvault.NotFound)
	_, err = e.V.GetTokenIntent(ctx, e.Pub.Key, in.ID)
	vaulttest.WantKind(t, "GetTokenIntent after conversion", err, tokenvault.NotFound)
	wantIntentLines(t, e.Env, in.ID, "Token intent created", "Token intent converted")

	// Converting deduplicates: a second intent of the same card, into
	// the same container, gives the existing token back.
	in2, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.V.Tokenize(ctx, e.Priv.Key, map[string]any{"card": map[string]any{"token_intent_id": in2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.(map[string]any)["card"].(*tokenvault.Token); got.ID != tok.ID {
		t.Errorf("converting a duplicate through Tokenize gave %s, want the existing %s", got.ID, tok.ID)
	}
	if err := e.V.DeleteTokenIntent(ctx, e.Pub.Key, in2.ID); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("the deduplicated intent is still there: %v", err)
	}
}

// TestTokenIntentDelete: the creator deletes its intent; then it cannot
// be read or converted; the lines say created, deleted.
func TestTokenIntentDelete(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeBank,
		Data: map[string]any{"routing_number": "011000015", "account_number": "123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.V.DeleteTokenIntent(ctx, e.Pub.Key, in.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
	vaulttest.WantKind(t, "converting a deleted intent", err, tokenvault.NotFound)
	wantIntentLines(t, e.Env, in.ID, "Token intent created", "Token intent deleted")
}

// TestTokenIntentConvertRace: two conversions of one intent at once:
// exactly one creates a token, the other is NotFound.
func TestTokenIntentConvertRace(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, base *vaulttest.Env) {
		e := vaulttest.WithIntentApps(t, base)
		for round := range 5 {
			in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: round})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID})
				})
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case tokenvault.ErrorKind(err) != tokenvault.NotFound:
					t.Errorf("a conversion failed with %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d conversions won (%v), want exactly 1", round, won, errs)
			}
		}
	})
}

// TestTokenIntentLifetimeOption: Options.Retention.TokenIntent sets the
// lifetime of an intent that names no expiry; over 48 hours, or negative,
// Open fails.
func TestTokenIntentLifetimeOption(t *testing.T) {
	e := vaulttest.WithIntentApps(t, vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Retention.TokenIntent = 6 * time.Hour }))
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := e.Clock.Now().Add(6 * time.Hour); !in.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %v, want %v", in.ExpiresAt, want)
	}
	for _, d := range []time.Duration{-time.Second, 48*time.Hour + time.Second} {
		_, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1, TokenIntent: d}})
		if err == nil {
			t.Errorf("Open with Retention.TokenIntent %v succeeded", d)
		}
	}
}

// TestTokenIntentConvertUpdatesDuplicate: converting an intent of a card
// the tenant holds already (same number, container) updates that token
// with the intent's data (a new expiration; the old cvc dropped), with a
// key holding token:update there; a key without it gets the token back
// unchanged. Either way the intent is consumed and no token is added.
func TestTokenIntentConvertUpdatesDuplicate(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	updater, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "updater", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate}}}})
	if err != nil {
		t.Fatal(err)
	}
	held, err := e.V.CreateToken(ctx, updater.Key, tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard(),
		Metadata: map[string]string{"kept": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	renewed := func() string {
		t.Helper()
		in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
			Data: map[string]any{"number": "4242424242424242", "expiration_month": 6, "expiration_year": 2039, "cvc": "555"}})
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	data := func() map[string]any {
		t.Helper()
		tok, err := e.V.GetToken(ctx, updater.Key, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Metadata["kept"] != "yes" {
			t.Errorf("the token's metadata changed: %v", tok.Metadata)
		}
		return vaulttest.RoundTrip(t, tok.Data).(map[string]any)
	}

	// Without token:update: the token back, unchanged.
	got, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: renewed()})
	if err != nil || got.ID != held.ID {
		t.Fatalf("converting a duplicate without token:update = %+v, %v; want the held token", got, err)
	}
	if d := data(); d["expiration_year"] != 2035.0 || d["cvc"] != "123" {
		t.Errorf("without token:update the token became %v", d)
	}

	// With it: the data replaced by the intent's, without a cvc.
	got, err = e.V.CreateToken(ctx, updater.Key, tokenvault.TokenRequest{TokenIntentID: renewed()})
	if err != nil || got.ID != held.ID {
		t.Fatalf("converting a duplicate = %+v, %v; want the held token", got, err)
	}
	if d := data(); d["expiration_year"] != 2039.0 || d["expiration_month"] != 6.0 || d["cvc"] != nil {
		t.Errorf("the updated token's data = %v, want the intent's expiration and no cvc", d)
	}
	page, err := e.V.ListTokens(ctx, updater.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(page.Data) != 1 {
		t.Errorf("tokens after two deduplicated conversions: %d, %v; want 1", len(page.Data), err)
	}
}
