package pkcs11_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/ThalesGroup/crypto11"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/pkcs11"
	"github.com/tokenvault/tokenvault/keywrap/pkcs11/softhsmtest"
	"github.com/tokenvault/tokenvault/store/memory"
)

var ctx = context.Background()

func open(t *testing.T, cfg pkcs11.Config) *pkcs11.Wrapper {
	t.Helper()
	w, err := pkcs11.Open(cfg)
	if err != nil {
		t.Fatalf("pkcs11.Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestWrapUnwrap: the first Wrap generates the key in the token; it is
// sensitive and not extractable; what it wraps unwraps with the same aad
// only, after a restart too.
func TestWrapUnwrap(t *testing.T) {
	tok := softhsmtest.New(t, "tv-test")
	cfg := pkcs11.Config{Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "root"}
	w := open(t, cfg)
	if _, err := w.Unwrap(ctx, tokenvault.WrappedKey{Kind: pkcs11.Kind, KeyID: "root", Version: "00", Ciphertext: make([]byte, 40)}, nil); err == nil {
		t.Error("Unwrap before any key exists succeeded")
	}
	wk, err := w.Wrap(ctx, []byte("key material"), []byte("tenant/a/keyring"))
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	if wk.Kind != "pkcs11" || wk.KeyID != "root" || len(wk.Version) != 32 {
		t.Errorf("Wrap = kind %q, key id %q, version %q; want pkcs11, root, 32 hex digits", wk.Kind, wk.KeyID, wk.Version)
	}
	if strings.Contains(string(wk.Ciphertext), "key material") {
		t.Error("the ciphertext holds the plaintext")
	}
	got, err := w.Unwrap(ctx, wk, []byte("tenant/a/keyring"))
	if err != nil || string(got) != "key material" {
		t.Fatalf("Unwrap = %q, %v", got, err)
	}
	if _, err := w.Unwrap(ctx, wk, []byte("tenant/b/keyring")); err == nil {
		t.Error("Unwrap with another aad succeeded")
	}
	for i := range wk.Ciphertext {
		bad := wk
		bad.Ciphertext = append([]byte(nil), wk.Ciphertext...)
		bad.Ciphertext[i] ^= 0x80
		if _, err := w.Unwrap(ctx, bad, []byte("tenant/a/keyring")); err == nil {
			t.Errorf("Unwrap with byte %d flipped succeeded", i)
		}
	}
	w.Close()

	// A second context (a restart) finds the key by its label, and the
	// key cannot be read out of the token.
	w2 := open(t, cfg)
	if got, err := w2.Unwrap(ctx, wk, []byte("tenant/a/keyring")); err != nil || string(got) != "key material" {
		t.Fatalf("Unwrap after reopening = %q, %v", got, err)
	}
	p11, err := crypto11.Configure(&crypto11.Config{Path: tok.Module, TokenLabel: tok.Label, Pin: tok.PIN})
	if err != nil {
		t.Fatal(err)
	}
	defer p11.Close()
	keys, err := p11.FindKeys(nil, []byte("root"))
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys labelled root: %d, %v; want 1", len(keys), err)
	}
	for _, c := range []struct {
		attr crypto11.AttributeType
		want byte
	}{{crypto11.CkaExtractable, 0}, {crypto11.CkaSensitive, 1}, {crypto11.CkaToken, 1}} {
		a, err := p11.GetAttribute(keys[0], c.attr)
		if err != nil || len(a.Value) != 1 || a.Value[0] != c.want {
			t.Errorf("attribute %v = %v, %v; want %d", c.attr, a, err, c.want)
		}
	}
	if _, err := p11.GetAttribute(keys[0], crypto11.CkaValue); err == nil {
		t.Error("the key's value (CKA_VALUE) can be read out of the token")
	}
}

// TestOpenFails: a wrong token label or PIN fails Open, without the PIN in
// the error; a wrong key label fails to unwrap and generates nothing.
func TestOpenFails(t *testing.T) {
	tok := softhsmtest.New(t, "tv-test")
	for name, cfg := range map[string]pkcs11.Config{
		"wrong token": {Module: tok.Module, TokenLabel: "no-such-token", PIN: tok.PIN, KeyLabel: "root"},
		"wrong PIN":   {Module: tok.Module, TokenLabel: tok.Label, PIN: "9999-wrong", KeyLabel: "root"},
		"no module":   {Module: "/nonexistent/libpkcs11.so", TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "root"},
		"no key":      {Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN},
	} {
		w, err := pkcs11.Open(cfg)
		if err == nil {
			w.Close()
			t.Errorf("%s: Open succeeded", name)
			continue
		}
		if strings.Contains(err.Error(), tok.PIN) || strings.Contains(err.Error(), "9999-wrong") {
			t.Errorf("%s: the error %q holds the PIN", name, err)
		}
	}
	w := open(t, pkcs11.Config{Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "root"})
	wk, err := w.Wrap(ctx, []byte("k"), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := open(t, pkcs11.Config{Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "other"})
	if _, err := other.Unwrap(ctx, wk, nil); err == nil {
		t.Error("Unwrap with another key label succeeded")
	}
	wk.KeyID = "other"
	if _, err := other.Unwrap(ctx, wk, nil); err == nil {
		t.Error("Unwrap with a key label that does not exist succeeded")
	}
	p11, err := crypto11.Configure(&crypto11.Config{Path: tok.Module, TokenLabel: tok.Label, Pin: tok.PIN})
	if err != nil {
		t.Fatal(err)
	}
	defer p11.Close()
	if keys, err := p11.FindKeys(nil, []byte("other")); err != nil || len(keys) != 0 {
		t.Errorf("unwrapping generated %d keys labelled other (%v), want none", len(keys), err)
	}
}

// TestVault: a Vault on SoftHSM2 reopens with the token only, refuses a
// store when the key is another, and rotates to a new key label and to a
// local master key and back.
func TestVault(t *testing.T) {
	tok := softhsmtest.New(t, "tv-test")
	cfg := pkcs11.Config{Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "root-1"}
	s := memory.New()
	vopen := func(o tokenvault.Options) (*tokenvault.Vault, error) {
		o.Store, o.Retention.SweepInterval = s, -1
		return tokenvault.Open(ctx, o)
	}
	master := make([]byte, 32)
	rand.Read(master)
	v, err := vopen(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: master}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	hsm := open(t, cfg)
	if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
		t.Fatalf("RotateKeyWrapper to pkcs11: %v", err)
	}
	v.Close()
	if _, err := vopen(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: master}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Errorf("Open with the old master key = %v, want ErrWrongMasterKey", err)
	}
	other := open(t, pkcs11.Config{Module: tok.Module, TokenLabel: tok.Label, PIN: tok.PIN, KeyLabel: "root-2"})
	if _, err := vopen(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: other}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Errorf("Open with another key label = %v, want ErrWrongMasterKey", err)
	}
	v, err = vopen(tokenvault.Options{Keys: tokenvault.KeyOptions{Wrapper: hsm}})
	if err != nil {
		t.Fatalf("Open with the HSM: %v", err)
	}
	if _, err := v.GetApplication(ctx, boot.Application.Key, boot.Application.ID); err != nil {
		t.Errorf("GetApplication on the HSM: %v", err)
	}
	if err := v.RotateKeyWrapper(ctx, other); err != nil {
		t.Fatalf("RotateKeyWrapper to root-2: %v", err)
	}
	counts, err := v.WrappedKeys(ctx)
	if err != nil || len(counts) != 1 || counts[0].Kind != "pkcs11" || counts[0].KeyID != "root-2" || counts[0].Count != 2 {
		t.Errorf("WrappedKeys = %+v, %v; want 2 keyrings under root-2", counts, err)
	}
	if err := v.RotateMasterKey(ctx, master); err != nil {
		t.Fatalf("RotateMasterKey back to local: %v", err)
	}
	v.Close()
	v, err = vopen(tokenvault.Options{Keys: tokenvault.KeyOptions{MasterKey: master}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.GetApplication(ctx, boot.Application.Key, boot.Application.ID); err != nil {
		t.Errorf("GetApplication back on a local key: %v", err)
	}
}
