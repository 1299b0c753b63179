package subjects

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

func testMAC(parts ...[]byte) []byte {
	h := hmac.New(sha256.New, []byte("index key"))
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// TestKeyStore: a subject's key is made once and read back by id; the
// store holds neither the subject nor the key in clear; Destroy deletes
// it (the entries, not a flag), is idempotent, and the next Current makes
// a new key; DestroyIDs keeps a current key it does not name.
func TestKeyStore(t *testing.T) {
	ctx := context.Background()
	ring, err := seal.NewKeyring(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	ks := &KeyStore{Store: st}
	lookup := Lookup(testMAC, "alice@example.com")
	id, key, err := ks.Current(ctx, "t1", lookup, ring)
	if err != nil || len(key) != seal.KeySize {
		t.Fatalf("Current = %q, %d bytes, %v", id, len(key), err)
	}
	id2, key2, err := ks.Current(ctx, "t1", lookup, ring)
	if err != nil || id2 != id || !bytes.Equal(key2, key) {
		t.Fatalf("Current again = %q, %v; want the same key %q", id2, err, id)
	}
	if got, err := ks.Key(ctx, "t1", id, ring); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("Key(%s) = %v", id, err)
	}
	if got, err := ks.Key(ctx, "t2", id, ring); err != nil || got != nil {
		t.Fatalf("Key(another tenant) = %x, %v; want none", got, err)
	}
	st.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			if strings.Contains(string(k), "alice") || bytes.Contains(v, key) || strings.Contains(string(v), "alice") {
				t.Errorf("the key store holds %q = %x in clear", k, v)
			}
			return nil
		})
	})
	if ok, err := ks.Has(ctx, "t1", lookup); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}

	destroyed, err := ks.Destroy(ctx, "t1", lookup, []string{id})
	if err != nil || len(destroyed) != 1 || destroyed[0] != id {
		t.Fatalf("Destroy = %v, %v", destroyed, err)
	}
	n := 0
	st.View(ctx, func(tx store.Tx) error { return tx.Scan(nil, nil, 0, func(_, _ []byte) error { n++; return nil }) })
	if n != 0 {
		t.Errorf("after Destroy the key store holds %d entries; want none", n)
	}
	if got, err := ks.Key(ctx, "t1", id, ring); err != nil || got != nil {
		t.Fatalf("Key after Destroy = %x, %v; want none", got, err)
	}
	if again, err := ks.Destroy(ctx, "t1", lookup, []string{id}); err != nil || len(again) != 0 {
		t.Fatalf("Destroy again = %v, %v; want nothing", again, err)
	}
	id3, _, err := ks.Current(ctx, "t1", lookup, ring)
	if err != nil || id3 == id {
		t.Fatalf("Current after Destroy = %q, %v; want a new key", id3, err)
	}
	if d, err := ks.DestroyIDs(ctx, "t1", lookup, []string{id}); err != nil || len(d) != 0 {
		t.Fatalf("DestroyIDs(the destroyed key) = %v, %v", d, err)
	}
	if got, err := ks.Key(ctx, "t1", id3, ring); err != nil || got == nil {
		t.Fatalf("DestroyIDs destroyed the new key: %v", err)
	}
	if ok, _ := ks.Has(ctx, "t1", lookup); !ok {
		t.Fatal("DestroyIDs removed the new current key")
	}
}
