package tokenvault

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"

	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestTokenIntentKeepsNoCVC: a card intent's stored record holds the
// number and expiration, not the cvc the request sent (the facade hands
// internal/intents the data without it).
func TestTokenIntentKeepsNoCVC(t *testing.T) {
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	v, err := Open(ctx, Options{Store: memory.New(), Keys: KeyOptions{MasterKey: mk}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{Name: "web", Type: Public, Permissions: []string{PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := v.CreateTokenIntent(ctx, pub.Key, TokenIntentRequest{Type: TypeCard,
		Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035, "cvc": "987"}})
	if err != nil {
		t.Fatal(err)
	}
	err = v.view(ctx, func(tx *txn) error {
		rec, err := intents.Get(tx.Tx, boot.Tenant.ID, in.ID)
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
