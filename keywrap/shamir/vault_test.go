package shamir_test

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/shamir"
)

// TestOpenVaultFromShares, in process: k shares of a root key open the
// Vault it made; one custodian's share with a guessed other does not (its
// key id differs, and the Vault refuses it with ErrWrongMasterKey).
func TestOpenVaultFromShares(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vault.db")
	key := make([]byte, 32)
	rand.Read(key)
	check, _ := tokenvault.LocalKeyID(key)
	shares, err := shamir.Split(key, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	open := func(k []byte) error {
		v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: k}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err == nil {
			v.Close()
		}
		return err
	}
	if err := open(key); err != nil {
		t.Fatal(err)
	}
	clear(key)

	// One custodian alone: their share and any guess.
	guess := make(shamir.Share, len(shares[0]))
	rand.Read(guess)
	guess[0] = 2
	wrong, err := shamir.Combine([]shamir.Share{shares[0], guess})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := tokenvault.LocalKeyID(wrong); id == check {
		t.Fatal("one share and a guess made a key of the right id")
	}
	if err := open(wrong); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Fatalf("Open with one share and a guess = %v, want ErrWrongMasterKey", err)
	}
	if _, err := shamir.Combine(shares[:1]); !errors.Is(err, shamir.ErrInvalid) {
		t.Fatalf("Combine of one share = %v, want ErrInvalid", err)
	}

	for _, pair := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		k, err := shamir.Combine([]shamir.Share{shares[pair[0]], shares[pair[1]]})
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := tokenvault.LocalKeyID(k); id != check {
			t.Fatalf("shares %v: key id %s, want %s", pair, id, check)
		}
		if err := open(k); err != nil {
			t.Fatalf("shares %v: %v", pair, err)
		}
	}
}
