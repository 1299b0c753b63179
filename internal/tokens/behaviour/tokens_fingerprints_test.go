package tokens_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// On a store one process holds, the fingerprint index lives in memory and
// is rebuilt from the token records when a Vault opens (internal/tokens/fingerprints.go). These
// tests hold deduplication and the fingerprint filter to what they were
// with the index in the store: across a restart, after deletes and
// updates, and on a store whose older tokens were indexed in the store.

// openBolt opens the Vault of a bbolt file, hiding the store's
// SingleProcess marker when shared (as a store shared between processes
// would), so that the fingerprint index is kept in the store.
func openBolt(t *testing.T, path string, key []byte, shared bool) (*tokenvault.Vault, store.Store) {
	t.Helper()
	bs, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var s store.Store = bs
	if shared {
		s = vaulttest.SharedStore{Store: bs}
	}
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{
		Store:     s,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v, bs
}

func countKeys(t *testing.T, s store.Store, part string) int {
	t.Helper()
	n := 0
	if err := s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if bytes.Contains(k, []byte(part)) {
				n++
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFingerprintIndexSurvivesRestart(t *testing.T) {
	for _, older := range []bool{false, true} {
		name := "memory index"
		if older {
			name = "older tokens indexed in the store"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vault.db")
			key := vaulttest.NewMasterKey()
			v, bs := openBolt(t, path, key, older)
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
			if err != nil {
				t.Fatal(err)
			}
			app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "a",
				Type: tokenvault.Private, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
					Permissions: []string{"token:create", "token:read", "token:update", "token:delete"}}}})
			if err != nil {
				t.Fatal(err)
			}
			dedupe := func(v *tokenvault.Vault, data string) *tokenvault.Token {
				t.Helper()
				tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: data, DeduplicateToken: true})
				if err != nil {
					t.Fatal(err)
				}
				return tok
			}
			first := dedupe(v, "alpha")
			gone := dedupe(v, "beta")
			changed := dedupe(v, "gamma")
			if got := countKeys(t, bs, "/idx/fp/"); older != (got == 3) || !older && got != 0 {
				t.Fatalf("%d fingerprint index keys in the store (older tokens indexed there: %v)", got, older)
			}
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			bs.Close()

			v, bs = openBolt(t, path, key, false)
			defer func() { v.Close(); bs.Close() }()
			if again := dedupe(v, "alpha"); again.ID != first.ID {
				t.Errorf("after a restart, deduplication made %s, want the existing %s", again.ID, first.ID)
			}
			if err := v.DeleteToken(ctx, app.Key, gone.ID); err != nil {
				t.Fatal(err)
			}
			if again := dedupe(v, "beta"); again.ID == gone.ID {
				t.Errorf("deduplication returned a deleted token")
			}
			if _, err := v.UpdateToken(ctx, app.Key, changed.ID, json.RawMessage(`{"data": "delta"}`)); err != nil {
				t.Fatal(err)
			}
			if again := dedupe(v, "gamma"); again.ID == changed.ID {
				t.Errorf("deduplication matched a token whose data changed")
			}
			if again := dedupe(v, "delta"); again.ID != changed.ID {
				t.Errorf("deduplication of the updated value made %s, want %s", again.ID, changed.ID)
			}
			list, err := v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{Fingerprint: first.Fingerprint})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Data) != 1 || list.Data[0].ID != first.ID {
				t.Errorf("ListTokens(fingerprint) = %+v, want %s alone", list.Data, first.ID)
			}
			if got := countKeys(t, bs, "/idx/fp/"); got != 1 && older {
				t.Errorf("%d fingerprint index keys left, want only the untouched older token's", got)
			}
		})
	}
}

// TestFingerprintIndexRebuiltPastOnePage restarts a Vault holding more
// tokens than the rebuild reads at a time, and finds the last by its
// fingerprint.
func TestFingerprintIndexRebuiltPastOnePage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	v, bs := openBolt(t, path, key, false)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "a",
		Type: tokenvault.Private, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{"token:create", "token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}
	values := make([]any, 2500)
	for i := range values {
		values[i] = fmt.Sprintf("value-%d", i)
	}
	out, err := v.Tokenize(ctx, app.Key, values)
	if err != nil {
		t.Fatal(err)
	}
	ids := out.([]any)
	last, err := v.GetToken(ctx, app.Key, ids[len(ids)-1].(string))
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	bs.Close()

	v, bs = openBolt(t, path, key, false)
	defer func() { v.Close(); bs.Close() }()
	list, err := v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{Fingerprint: last.Fingerprint})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || list.Data[0].ID != last.ID {
		t.Errorf("after a restart, ListTokens(fingerprint of the 2,500th token) = %d tokens, want %s", len(list.Data), last.ID)
	}
}

// TestMemoryIndexedStoreIsNotOpenedAsShared opens a store written with the
// fingerprint index in memory through a wrapper that hides SingleProcess:
// its newer tokens have no index entries, so the open is refused, and the
// store still opens as what it is.
func TestMemoryIndexedStoreIsNotOpenedAsShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	v, bs := openBolt(t, path, key, false)
	v.Close()
	bs.Close()

	bs2, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tokenvault.Open(ctx, tokenvault.Options{Store: vaulttest.SharedStore{Store: bs2}, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	vaulttest.WantKind(t, "Open as a shared store", err, tokenvault.Invalid)
	bs2.Close()

	v, bs = openBolt(t, path, key, false)
	v.Close()
	bs.Close()
}
