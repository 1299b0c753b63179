package kms_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/hashicorp/go-kms-wrapping/v2/aead"
	"google.golang.org/protobuf/proto"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/kms"
	"github.com/tokenvault/tokenvault/store/memory"
)

var ctx = context.Background()

// aeadWrapper returns the library's local AEAD wrapper with a new random
// key under keyID.
func aeadWrapper(t *testing.T, keyID string) *kms.Wrapper {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	w := aead.NewWrapper()
	if _, err := w.SetConfig(ctx, wrapping.WithKeyId(keyID), aead.WithKey(key), aead.WithAeadType(wrapping.AeadTypeAesGcm)); err != nil {
		t.Fatal(err)
	}
	k, err := kms.New(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestWrapUnwrap(t *testing.T) {
	k := aeadWrapper(t, "key-1")
	if k.Kind() != "kms-aead" {
		t.Errorf("Kind() = %q, want kms-aead", k.Kind())
	}
	w, err := k.Wrap(ctx, []byte("key material"), []byte("tenant/a/keyring"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Kind != "kms-aead" || w.KeyID != "key-1" || w.Version == "" {
		t.Errorf("Wrap = kind %q, key id %q, version %q", w.Kind, w.KeyID, w.Version)
	}
	got, err := k.Unwrap(ctx, w, []byte("tenant/a/keyring"))
	if err != nil || string(got) != "key material" {
		t.Fatalf("Unwrap = %q, %v", got, err)
	}
	if _, err := k.Unwrap(ctx, w, []byte("tenant/b/keyring")); err == nil {
		t.Error("Unwrap with another aad succeeded")
	}
	if _, err := aeadWrapper(t, "key-1").Unwrap(ctx, w, []byte("tenant/a/keyring")); err == nil {
		t.Error("Unwrap with another key succeeded")
	}
	// The encrypted part is authenticated; the key id in the stored blob
	// is metadata, as in the Vault's envelope.
	var blob wrapping.BlobInfo
	if err := proto.Unmarshal(w.Ciphertext, &blob); err != nil {
		t.Fatal(err)
	}
	for i := range blob.Ciphertext {
		bad := proto.Clone(&blob).(*wrapping.BlobInfo)
		bad.Ciphertext[i] ^= 1
		b, _ := proto.Marshal(bad)
		if _, err := k.Unwrap(ctx, tokenvault.WrappedKey{Kind: w.Kind, KeyID: w.KeyID, Version: w.Version, Ciphertext: b}, []byte("tenant/a/keyring")); err == nil {
			t.Errorf("Unwrap with byte %d of the ciphertext flipped succeeded", i)
		}
	}
	// Cut anywhere before its trailing key info, a blob does not open
	// (nor panic the AEAD wrapper).
	for n := range len(w.Ciphertext) {
		bad := w
		bad.Ciphertext = w.Ciphertext[:n]
		if _, err := k.Unwrap(ctx, bad, []byte("tenant/a/keyring")); err == nil && n < len(w.Ciphertext)-len("key-1")-4 {
			t.Errorf("Unwrap of %d of %d bytes succeeded", n, len(w.Ciphertext))
		}
	}
}

// TestVault: a Vault whose root of trust is a go-kms-wrapping wrapper
// reopens with it, refuses another key, and moves to a new key and to a
// local master key.
func TestVault(t *testing.T) {
	s := memory.New()
	k1 := aeadWrapper(t, "key-1")
	open := func(o tokenvault.Options) (*tokenvault.Vault, error) {
		o.Store, o.Retention.SweepInterval = s, -1
		return tokenvault.Open(ctx, o)
	}
	v, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: k1}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	if _, err := open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: aeadWrapper(t, "key-1")}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Errorf("Open with another AEAD key = %v, want ErrWrongMasterKey", err)
	}
	v, err = open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: k1}})
	if err != nil {
		t.Fatal(err)
	}
	k2 := aeadWrapper(t, "key-2")
	if err := v.RotateKeyWrapper(ctx, k2); err != nil {
		t.Fatalf("RotateKeyWrapper to key-2: %v", err)
	}
	counts, err := v.WrappedKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0].KeyID != "key-2" || counts[0].Count != 2 {
		t.Errorf("WrappedKeys after rotating to key-2 = %+v", counts)
	}
	v.Close()
	v, err = open(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: k2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.GetApplication(ctx, boot.Application.Key, boot.Application.ID); err != nil {
		t.Errorf("GetApplication after rotating to key-2: %v", err)
	}
	master := make([]byte, 32)
	rand.Read(master)
	if err := v.RotateMasterKey(ctx, master); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v, err = open(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: master}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.GetApplication(ctx, boot.Application.Key, boot.Application.ID); err != nil {
		t.Errorf("GetApplication after moving to a local key: %v", err)
	}
}
