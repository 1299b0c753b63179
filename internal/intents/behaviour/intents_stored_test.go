package intents_test

import (
	"bytes"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTokenIntentKeepsNoCVC: a card intent's stored record holds the
// number and expiration, not the cvc the request sent (the facade hands
// internal/intents the data without it).
func TestTokenIntentKeepsNoCVC(t *testing.T) {
	e := vaulttest.NewEnv(t)
	pub := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
	in, err := e.V.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
		Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035, "cvc": "987"}})
	if err != nil {
		t.Fatal(err)
	}
	err = vaulttest.View(ctx, e.V, func(tx *unit.Tx) error {
		rec, err := intents.Get(tx, e.Boot.Tenant.ID, in.ID)
		if err != nil || rec == nil {
			t.Fatalf("the stored intent: %v, %v", rec, err)
		}
		if !bytes.Contains(rec.Data, []byte("4242424242424242")) || bytes.Contains(rec.Data, []byte("cvc")) || bytes.Contains(rec.Data, []byte("987")) {
			t.Errorf("stored data %s, want the card without its cvc", rec.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
