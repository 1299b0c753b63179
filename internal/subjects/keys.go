package subjects

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
)

// KeyStore keeps the data subjects' data keys in a store of their own
// (Options.SubjectKeys), apart from the data store and its backups, so
// that destroying a key there makes every copy of the subject's tokens
// unreadable, a restored backup of the data store included.
//
// Its keys, plain (the store holds no subject in clear):
//
//	subject-key/<tenant id>/<key id>         the subject's data key, sealed by the
//	                                         tenant's keyring for this store key
//	subject-current/<tenant id>/<lookup>     the id of the key new tokens of the
//	                                         subject are sealed under
//
// lookup is the subject's keyed hash under the tenant's index key
// (Lookup), so that the subject store alone does not say whom it holds
// keys for. Destroy deletes both: a destruction is final, not a flag.
//
// Nothing of it is cached: every call reads the store, so that a key
// another instance destroyed is never used again.
type KeyStore struct {
	Store store.Store
}

// Ring is what wraps subject keys: the tenant's keyring.
type Ring interface {
	Seal(aad, pt []byte) []byte
	Open(aad, ct []byte) ([]byte, error)
}

func keyKey(tid, keyID string) []byte      { return []byte("subject-key/" + tid + "/" + keyID) }
func currentKey(tid, lookup string) []byte { return []byte("subject-current/" + tid + "/" + lookup) }

// Lookup is the subject's name in the key store: its keyed hash under
// the tenant's index key (mac, barrier.Keys.MAC).
func Lookup(mac func(parts ...[]byte) []byte, subject string) string {
	return hex.EncodeToString(mac([]byte("subject\x00"), []byte(subject)))
}

// Current returns the id and bytes of the key that seals the subject's
// new tokens, creating it (committed to the key store before the token
// that uses it: an unused key is harmless) when the subject has none.
func (ks *KeyStore) Current(ctx context.Context, tid, lookup string, ring Ring) (string, []byte, error) {
	var id string
	var key []byte
	err := ks.Store.View(ctx, func(tx store.Tx) error {
		var err error
		id, key, err = readCurrent(tx, tid, lookup, ring)
		return err
	})
	if err != nil || key != nil {
		return id, key, err
	}
	err = ks.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if id, key, err = readCurrent(tx, tid, lookup, ring); err != nil || key != nil {
			return err
		}
		var idb [16]byte
		if _, err := rand.Read(idb[:]); err != nil {
			return err
		}
		id = hex.EncodeToString(idb[:])
		if key, err = seal.RandomKey(rand.Reader); err != nil {
			return err
		}
		k := keyKey(tid, id)
		if err := tx.Put(k, ring.Seal(k, key)); err != nil {
			return err
		}
		return tx.Put(currentKey(tid, lookup), []byte(id))
	})
	if err != nil {
		return "", nil, fmt.Errorf("tokenvault: subject key store: %w", err)
	}
	return id, key, nil
}

func readCurrent(tx store.Tx, tid, lookup string, ring Ring) (string, []byte, error) {
	v, err := tx.Get(currentKey(tid, lookup))
	if err != nil || v == nil {
		return "", nil, err
	}
	id := string(v)
	key, err := readKey(tx, tid, id, ring)
	if err != nil || key == nil {
		return "", nil, err
	}
	return id, key, nil
}

func readKey(tx store.Tx, tid, id string, ring Ring) ([]byte, error) {
	k := keyKey(tid, id)
	ct, err := tx.Get(k)
	if err != nil || ct == nil {
		return nil, err
	}
	key, err := ring.Open(k, ct)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: subject key %s does not open: %w", id, err)
	}
	return key, nil
}

// Key returns the bytes of key id of tenant tid, nil when the key store
// does not hold it (destroyed).
func (ks *KeyStore) Key(ctx context.Context, tid, id string, ring Ring) ([]byte, error) {
	var key []byte
	err := ks.Store.View(ctx, func(tx store.Tx) error {
		var err error
		key, err = readKey(tx, tid, id, ring)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tokenvault: subject key store: %w", err)
	}
	return key, nil
}

// Destroy deletes the subject's current key and the keys ids (those its
// tokens name), in one commit of the key store, and returns the ids of
// the keys it deleted (none when all were gone already: Destroy is
// idempotent).
func (ks *KeyStore) Destroy(ctx context.Context, tid, lookup string, ids []string) ([]string, error) {
	var destroyed []string
	err := ks.Store.Update(ctx, func(tx store.Tx) error {
		destroyed = destroyed[:0]
		want := append([]string(nil), ids...)
		cur, err := tx.Get(currentKey(tid, lookup))
		if err != nil {
			return err
		}
		if cur != nil {
			want = append(want, string(cur))
			if err := tx.Delete(currentKey(tid, lookup)); err != nil {
				return err
			}
		}
		seen := map[string]bool{}
		for _, id := range want {
			if seen[id] {
				continue
			}
			seen[id] = true
			ok, err := deleteKey(tx, tid, id)
			if err != nil {
				return err
			}
			if ok {
				destroyed = append(destroyed, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tokenvault: subject key store: %w", err)
	}
	return destroyed, nil
}

// Backup writes a snapshot of the key store to w (store.Snapshotter);
// ok is false for a store that cannot.
func (ks *KeyStore) Backup(ctx context.Context, w io.Writer) (ok bool, err error) {
	s, can := ks.Store.(store.Snapshotter)
	if !can {
		return false, nil
	}
	_, err = s.WriteSnapshot(ctx, w)
	return true, err
}

// Has reports whether the key store holds a current key for the subject.
func (ks *KeyStore) Has(ctx context.Context, tid, lookup string) (bool, error) {
	var ok bool
	err := ks.Store.View(ctx, func(tx store.Tx) error {
		v, err := tx.Get(currentKey(tid, lookup))
		ok = v != nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("tokenvault: subject key store: %w", err)
	}
	return ok, nil
}

// DestroyIDs deletes the keys ids of tenant tid, and the subject's
// current key only when it is one of them (a key made since, for new
// tokens of the subject, stays), in one commit, and returns the ids it
// deleted: the keys an erasure destroyed, destroyed again after a key
// store older than the erasure came back (the Vault's Open).
func (ks *KeyStore) DestroyIDs(ctx context.Context, tid, lookup string, ids []string) ([]string, error) {
	var destroyed []string
	err := ks.Store.Update(ctx, func(tx store.Tx) error {
		destroyed = destroyed[:0]
		cur, err := tx.Get(currentKey(tid, lookup))
		if err != nil {
			return err
		}
		for _, id := range ids {
			if cur != nil && string(cur) == id {
				if err := tx.Delete(currentKey(tid, lookup)); err != nil {
					return err
				}
			}
			ok, err := deleteKey(tx, tid, id)
			if err != nil {
				return err
			}
			if ok {
				destroyed = append(destroyed, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tokenvault: subject key store: %w", err)
	}
	return destroyed, nil
}

// DeleteTenant deletes every subject key of tenant tid (its deletion),
// batch keys per commit.
func (ks *KeyStore) DeleteTenant(ctx context.Context, tid string) error {
	const batch = 1000
	for _, prefix := range [][]byte{keyKey(tid, ""), currentKey(tid, "")} {
		for {
			n := 0
			err := ks.Store.Update(ctx, func(tx store.Tx) error {
				n = 0
				var doomed [][]byte
				if err := tx.Scan(prefix, nil, batch, func(k, _ []byte) error {
					doomed = append(doomed, append([]byte(nil), k...))
					return nil
				}); err != nil {
					return err
				}
				for _, k := range doomed {
					if err := tx.Delete(k); err != nil {
						return err
					}
				}
				n = len(doomed)
				return nil
			})
			if err != nil {
				return fmt.Errorf("tokenvault: subject key store: %w", err)
			}
			if n < batch {
				break
			}
		}
	}
	return nil
}

// deleteKey deletes key id of tenant tid in tx, and reports whether it
// was there.
func deleteKey(tx store.Tx, tid, id string) (bool, error) {
	k := keyKey(tid, id)
	v, err := tx.Get(k)
	if err != nil || v == nil {
		return false, err
	}
	return true, tx.Delete(k)
}
