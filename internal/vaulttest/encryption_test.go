package vaulttest_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

func TestBoltFileHoldsNoPlaintext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Plaintext Tenant Name", Owner: tokenvault.User{Email: "plain.owner@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "Plaintext Application Name", Type: tokenvault.Private, Permissions: []string{"token:read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	creator, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "creator", Type: tokenvault.Private, Permissions: []string{"token:create"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Tokenize(ctx, creator.Key, map[string]any{
		"ssn": tokenvault.TokenRequest{Type: "token", Data: "078-05-1120", SearchIndexes: []string{"{{ data }}"},
			Metadata: map[string]string{"Plaintext-Meta-Key": "plaintext-meta-value"}},
		"card": tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": "4000056655665556", "expiration_month": 7, "expiration_year": 2031, "cvc": "987"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// No short strings: hex store keys (HMACs, times) contain any four
	// digits by chance now and then.
	for _, secret := range []string{"Plaintext Tenant Name", "plain.owner@example.com", "Plaintext Application Name",
		"token:read", "application:create", string(boot.Application.Key), string(app.Key), string(key),
		"078-05-1120", "4000056655665556", "Plaintext-Meta-Key", "plaintext-meta-value"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the bbolt file contains %q in plaintext", secret[:min(len(secret), 12)])
		}
	}
}

func TestCiphertextMovedToAnotherRecordFails(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := e.App(t, tokenvault.Private, "token:read")
	b := e.App(t, tokenvault.Private, "token:use")
	prefix := "tenant/" + e.Boot.Tenant.ID + "/application/"
	err := e.Store.Update(ctx, func(tx store.Tx) error {
		v, err := tx.Get([]byte(prefix + a.ID))
		if err != nil || v == nil {
			t.Fatalf("raw record of a: %v, %v", v, err)
		}
		return tx.Put([]byte(prefix+b.ID), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.V.GetApplication(ctx, e.Mgmt, b.ID)
	vaulttest.WantKind(t, "GetApplication of a record holding another's ciphertext", err, tokenvault.Internal)
	if got != nil {
		t.Errorf("GetApplication returned %+v", got)
	}
	if strings.Contains(err.Error(), a.ID) || strings.Contains(err.Error(), "token:read") {
		t.Errorf("error %q reveals the moved record", err)
	}
}

func TestWrongMasterKeyChangesNothing(t *testing.T) {
	s := memory.New()
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	before := vaulttest.Dump(t, s)
	_, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Fatalf("Open with another master key = %v, want ErrWrongMasterKey", err)
	}
	if diff := cmp.Diff(before, vaulttest.Dump(t, s)); diff != "" {
		t.Errorf("Open with a wrong key changed the store:\n%s", diff)
	}
	_, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: []byte("short")}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("Open with a 5-byte key = %v, want an error that does not echo the key", err)
	}
}

func TestRotateMasterKey(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			oldKey, newKey := vaulttest.NewMasterKey(), vaulttest.NewMasterKey()
			v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: oldKey}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
			if err != nil {
				t.Fatal(err)
			}
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.RotateMasterKey(ctx, newKey); err != nil {
				t.Fatalf("RotateMasterKey: %v", err)
			}
			// Serving goes on, and new tenants are wrapped with the new key.
			if _, err := v.GetApplicationByKey(ctx, boot.Application.Key); err != nil {
				t.Errorf("after rotation: %v", err)
			}
			boot2, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t2"})
			if err != nil {
				t.Fatal(err)
			}
			v.Close()

			if _, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: oldKey}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}}); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
				t.Errorf("Open with the old key after rotation = %v, want ErrWrongMasterKey", err)
			}
			v2, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: newKey}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
			if err != nil {
				t.Fatalf("Open with the new key: %v", err)
			}
			defer v2.Close()
			for _, b := range []*tokenvault.TenantBootstrap{boot, boot2} {
				if _, err := v2.GetApplication(ctx, b.Application.Key, b.Application.ID); err != nil {
					t.Errorf("tenant %s after reopen with the new key: %v", b.Tenant.Name, err)
				}
			}
			if err := v2.RotateMasterKey(ctx, []byte("too short")); tokenvault.ErrorKind(err) != tokenvault.Invalid {
				t.Errorf("RotateMasterKey(short) = %v, want Invalid", err)
			}
		})
	}
}

func TestRotateDataKey(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := e.App(t, tokenvault.Private, "token:read")
	if err := e.V.RotateDataKey(ctx, e.Mgmt); err != nil {
		t.Fatalf("RotateDataKey: %v", err)
	}
	b := e.App(t, tokenvault.Private, "token:use")
	term := func(id string) uint32 {
		t.Helper()
		raw := vaulttest.Dump(t, e.Store)["tenant/"+e.Boot.Tenant.ID+"/application/"+id]
		n, ok := seal.Term(raw)
		if !ok {
			t.Fatalf("record %s has no term", id)
		}
		return n
	}
	if ta, tb := term(a.ID), term(b.ID); ta != 1 || tb != 2 {
		t.Errorf("terms of records before and after rotation = %d, %d; want 1, 2", ta, tb)
	}
	// A second Vault on the same store (another instance, cold cache) reads
	// both terms.
	v2, err := tokenvault.Open(ctx, tokenvault.Options{Store: e.Store, Keys: tokenvault.KeyOptions{MasterKey: e.Key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	for _, id := range []string{a.ID, b.ID} {
		if _, err := v2.GetApplication(ctx, e.Mgmt, id); err != nil {
			t.Errorf("GetApplication(%s) on a second instance: %v", id, err)
		}
	}
	// The first instance rotates again; the second, with a cached keyring,
	// still opens what the first seals.
	if err := e.V.RotateDataKey(ctx, e.Mgmt); err != nil {
		t.Fatal(err)
	}
	c := e.App(t, tokenvault.Private, "token:create")
	if term(c.ID) != 3 {
		t.Errorf("term after second rotation = %d, want 3", term(c.ID))
	}
	if _, err := v2.GetApplication(ctx, e.Mgmt, c.ID); err != nil {
		t.Errorf("second instance reading a term-3 record: %v", err)
	}
}
