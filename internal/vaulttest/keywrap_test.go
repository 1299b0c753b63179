package vaulttest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// tokenizeOne creates a tenant and an application in v and tokenizes one
// value; it returns the application's key and the token's id.
func tokenizeOne(t *testing.T, v *tokenvault.Vault, value string) (appKey tokenvault.Credential, id string) {
	t.Helper()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t " + value})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "rw", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := v.Tokenize(ctx, app.Key, map[string]any{"v": tokenvault.TokenRequest{Type: "token", Data: value}})
	if err != nil {
		t.Fatal(err)
	}
	return app.Key, toks.(map[string]any)["v"].(*tokenvault.Token).ID
}

// wantReadable fails unless every token reads back with its value.
func wantReadable(t *testing.T, v *tokenvault.Vault, what string, tokens map[string][2]string) {
	t.Helper()
	for value, kid := range tokens {
		tok, err := v.GetToken(ctx, tokenvault.Credential(kid[0]), kid[1])
		if err != nil {
			t.Errorf("%s: GetToken(%s) = %v", what, value, err)
			continue
		}
		if tok.Data != value {
			t.Errorf("%s: GetToken(%s).Data = %v", what, value, tok.Data)
		}
	}
}

// wantWrappedBy fails unless every keyring of v's store (n of them) is
// wrapped by kind.
func wantWrappedBy(t *testing.T, v *tokenvault.Vault, kind string, n int) {
	t.Helper()
	got, err := v.WrappedKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != kind || got[0].Count != n || got[0].Legacy || got[0].KeyID == "" || got[0].Version == "" {
		t.Errorf("WrappedKeys = %+v, want all %d keyrings under one %s key", got, n, kind)
	}
}

// TestRotateKeyWrapper moves a store from a local master key to another
// kind of key wrapper and back: every token stays readable, the store
// then opens with the new wrapper alone, and no longer with the old one.
func TestRotateKeyWrapper(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			key := vaulttest.NewMasterKey()
			open := func(o tokenvault.Options) (*tokenvault.Vault, error) {
				o.Store, o.Retention.SweepInterval = s, -1
				return tokenvault.Open(ctx, o)
			}
			v, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: key}})
			if err != nil {
				t.Fatal(err)
			}
			tokens := map[string][2]string{}
			k, id := tokenizeOne(t, v, "before")
			tokens["before"] = [2]string{string(k), id}
			wantWrappedBy(t, v, "local", 2)

			hsm := vaulttest.NewAESWrapper(t)
			if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
				t.Fatalf("RotateKeyWrapper: %v", err)
			}
			k, id = tokenizeOne(t, v, "during") // online: the same Vault serves on
			tokens["during"] = [2]string{string(k), id}
			wantReadable(t, v, "after rotating to test-aes", tokens)
			wantWrappedBy(t, v, "test-aes", 3)
			v.Close()

			if _, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: key}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
				t.Errorf("Open with the old master key = %v, want ErrWrongMasterKey", err)
			}
			if _, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: hsm, MasterKey: key}}); err == nil {
				t.Error("Open with KeyWrapper and MasterKey succeeded, want an error")
			}
			v, err = open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: hsm}})
			if err != nil {
				t.Fatalf("Open with the new wrapper alone: %v", err)
			}
			wantReadable(t, v, "reopened with test-aes", tokens)

			back := vaulttest.NewMasterKey()
			if err := v.RotateMasterKey(ctx, back); err != nil {
				t.Fatalf("RotateMasterKey back to local: %v", err)
			}
			wantWrappedBy(t, v, "local", 3)
			v.Close()
			if _, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: hsm}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
				t.Errorf("Open with the HSM wrapper after moving back = %v, want ErrWrongMasterKey", err)
			}
			v, err = open(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: back}})
			if err != nil {
				t.Fatalf("Open with the new local key: %v", err)
			}
			defer v.Close()
			wantReadable(t, v, "back on a local key", tokens)
		})
	}
}

// TestRotateKeyWrapperInterrupted: a rotation that is run again after a
// crash (the store already under the new wrapper, or not yet) finishes
// with both wrappers given.
func TestRotateKeyWrapperInterrupted(t *testing.T) {
	s := memory.New()
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	k, id := tokenizeOne(t, v, "x")
	hsm := vaulttest.NewAESWrapper(t)
	if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
		t.Fatal(err)
	}
	v.Close()
	old, err := tokenvault.NewLocalKeyWrapper(key)
	if err != nil {
		t.Fatal(err)
	}
	// Committed, then crashed before the operator's files changed: both
	// wrappers given, the rotation runs again.
	v, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{Wrapper: hsm, PreviousWrappers: []tokenvault.KeyWrapper{old}}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
		t.Fatalf("RotateKeyWrapper again: %v", err)
	}
	wantReadable(t, v, "after the rotation ran twice", map[string][2]string{"x": {string(k), id}})
	wantWrappedBy(t, v, "test-aes", 2)
	v.Close()
}

// TestWrongKeyWrapperChangesNothing: a key wrapper that cannot unwrap the
// store's keyring fails Open with ErrWrongMasterKey, and writes nothing.
func TestWrongKeyWrapperChangesNothing(t *testing.T) {
	s := memory.New()
	hsm := vaulttest.NewAESWrapper(t)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{Wrapper: hsm}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	tokenizeOne(t, v, "x")
	v.Close()
	before := vaulttest.Dump(t, s)
	for name, o := range map[string]tokenvault.Options{
		"another key of the same kind": {Keys: tokenvault.KeyOptions{Wrapper: vaulttest.NewAESWrapper(t)}},
		"a local key":                  {Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}},
	} {
		o.Store, o.Retention.SweepInterval = s, -1
		_, err := tokenvault.Open(ctx, o)
		if !errors.Is(err, tokenvault.ErrWrongMasterKey) {
			t.Errorf("%s: Open = %v, want ErrWrongMasterKey", name, err)
		}
	}
	if diff := cmp.Diff(before, vaulttest.Dump(t, s)); diff != "" {
		t.Errorf("Open with a wrong wrapper changed the store:\n%s", diff)
	}
}

// TestLegacyKeyringsOpenAndRewrap: keyrings wrapped by a bare master key
// (the format before key wrappers: seal's ciphertext, no envelope) still
// open, are counted as legacy, and a rotation rewraps them into envelopes.
func TestLegacyKeyringsOpenAndRewrap(t *testing.T) {
	s := memory.New()
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	k, id := tokenizeOne(t, v, "old")
	v.Close()
	// The local wrapper's ciphertext is what a bare master key wrote:
	// strip the envelope to make the store what an older version left.
	n := 0
	all := vaulttest.Dump(t, s)
	err = s.Update(ctx, func(tx store.Tx) error {
		for key, raw := range all {
			if key != "sys/keyring" && !strings.HasSuffix(key, "/keyring") {
				continue
			}
			if raw[0] != 2 {
				t.Fatalf("%s does not start with the envelope version: %x", key, raw[:1])
			}
			rest := raw[1:]
			for range 3 {
				rest = rest[1+int(rest[0]):]
			}
			if rest[0] != 1 {
				t.Fatalf("%s: local ciphertext does not start with seal's version", key)
			}
			n++
			if err := tx.Put([]byte(key), rest); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("stripping envelopes: %v (%d keyrings)", err, n)
	}
	tokens := map[string][2]string{"old": {string(k), id}}

	if _, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{Wrapper: vaulttest.NewAESWrapper(t)}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Errorf("Open of a legacy store without its master key = %v, want ErrWrongMasterKey", err)
	}
	v, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatalf("Open of a legacy store: %v", err)
	}
	wantReadable(t, v, "legacy store", tokens)
	got, err := v.WrappedKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []tokenvault.WrappedKeyCount{{Kind: "local", Legacy: true, Count: 2}}; !cmp.Equal(got, want) {
		t.Errorf("WrappedKeys of a legacy store = %+v, want %+v", got, want)
	}
	// A legacy store moves to another wrapper directly.
	hsm := vaulttest.NewAESWrapper(t)
	if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
		t.Fatalf("RotateKeyWrapper of a legacy store: %v", err)
	}
	wantWrappedBy(t, v, "test-aes", 2)
	v.Close()
	v, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{Wrapper: hsm}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	wantReadable(t, v, "legacy store moved to test-aes", tokens)
}
