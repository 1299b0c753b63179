package vaulttest_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestNeededKeyNamesTheKeyAStoreWasWrappedUnder: Open with another master
// key fails with ErrWrongMasterKey, and NeededKey names the kind and the
// key id of the key the store needs, which is LocalKeyID of that key (and
// not of the key given); other errors name none.
func TestNeededKeyNamesTheKeyAStoreWasWrappedUnder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vault.db")
	key, other := vaulttest.NewMasterKey(), vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	_, err = tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: other}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if !errors.Is(err, tokenvault.ErrWrongMasterKey) {
		t.Fatalf("Open with another key = %v", err)
	}
	want, err2 := tokenvault.LocalKeyID(key)
	otherID, _ := tokenvault.LocalKeyID(other)
	if err2 != nil || !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(want) || want == otherID {
		t.Fatalf("LocalKeyID = %q, %v (other key %q)", want, err2, otherID)
	}
	needs, ok := tokenvault.NeededKey(err)
	if !ok || needs.Kind != "local" || needs.KeyID != want || needs.Ciphertext != nil {
		t.Errorf("NeededKey = %+v, %v; want local, %s, no ciphertext", needs, ok, want)
	}
	if _, ok := tokenvault.NeededKey(errors.New("other")); ok {
		t.Error("NeededKey of another error reported a key")
	}
	if _, err := tokenvault.LocalKeyID([]byte("short")); err == nil {
		t.Error("LocalKeyID of a short key succeeded")
	}
}
