package tokenvault

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The checkpoint signing keys (docs/audit-chain.md).
//
// The vault signs its chain heads (checkpoints.go) with an Ed25519 key of
// its own, made on the first Open of a store. The key is held under the
// root of trust like the keyrings: its record, sys/audit-key/<key id>
// (auditlog.KeyRecord), holds the public key and the 32-byte seed wrapped by
// the key wrapper for that store key, and is sealed by the system keyring;
// RotateKeyWrapper (and so RotateMasterKey) wraps the seed again with the
// keyrings, in the same transaction. The private key is unwrapped when
// first needed and kept in memory (auditSigner); it is never logged,
// returned or stored unwrapped.
//
// RotateAuditKey makes a new key and retires the one in use: a retired key
// is kept, with its retired_at, so the checkpoints it signed still verify,
// and AuditKeys (GET /audit/keys) publishes every key. The rotation is
// recorded in every tenant's chain: the first checkpoint of a tenant
// signed with a key other than its last checkpoint's is preceded, in the
// same transaction, by a chained line (actor system, entity tenant,
// operation update) naming both key ids.

// auditKeyAlgorithm is the Algorithm of every published key.
const auditKeyAlgorithm = "Ed25519"

// auditSigner is the private key in use, unwrapped.
type auditSigner struct {
	id   string
	priv ed25519.PrivateKey
}

// String keeps the private key out of any log line that prints a signer.
func (s *auditSigner) String() string { return "tokenvault.auditSigner{" + s.id + "}" }

// newAuditKey makes a key from rand, its seed wrapped by the current key
// wrapper for its store key, created at now. The caller holds wrapMu for
// reading, so that no wrapper rotation leaves it under the old wrapper.
func (v *Vault) newAuditKey(ctx context.Context, r io.Reader, now time.Time) (*auditlog.KeyRecord, *auditSigner, error) {
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return nil, nil, fmt.Errorf("tokenvault: new audit key: %w", err)
	}
	id := auditchain.KeyID(pub)
	seed := priv.Seed()
	defer clear(seed)
	wrapped, err := v.wrappers.Load().wrap(ctx, barrier.AuditKey(id).String(), seed)
	if err != nil {
		return nil, nil, err
	}
	return &auditlog.KeyRecord{ID: id, Public: pub, Wrapped: wrapped, CreatedAt: now.UTC()},
		&auditSigner{id: id, priv: priv}, nil
}

// auditKeyRecords reads every signing key of the store, oldest first.
func (t *txn) auditKeyRecords() ([]*auditlog.KeyRecord, error) {
	vals, err := t.ScanValues(barrier.AuditKeys)
	if err != nil {
		return nil, err
	}
	out := make([]*auditlog.KeyRecord, 0, len(vals))
	for _, sv := range vals {
		r := &auditlog.KeyRecord{}
		if err := t.OpenRecord(sv.Key, sv.Raw, r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	// Oldest first; of keys made at one instant (a clock that stood
	// still), the retired ones first, in the order they were retired.
	slices.SortFunc(out, func(a, b *auditlog.KeyRecord) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmpBool(a.RetiredAt.IsZero(), b.RetiredAt.IsZero()),
			a.RetiredAt.Compare(b.RetiredAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// activeAuditKey is the key in use among keys: the newest not retired
// (two instances opening an empty shared store at once conflict on the
// scan and the write, and the store runs one again, so there is one).
func activeAuditKey(keys []*auditlog.KeyRecord) *auditlog.KeyRecord {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i].RetiredAt.IsZero() {
			return keys[i]
		}
	}
	return nil
}

// ensureAuditKey makes the store's first signing key when it has none,
// at Open, and unwraps the key in use.
func (v *Vault) ensureAuditKey(ctx context.Context) error {
	var active *auditlog.KeyRecord
	if err := v.view(ctx, func(t *txn) error {
		keys, err := t.auditKeyRecords()
		active = activeAuditKey(keys)
		return err
	}); err != nil {
		return fmt.Errorf("tokenvault: read the audit signing keys: %w", err)
	}
	if active == nil {
		v.wrapMu.RLock()
		defer v.wrapMu.RUnlock()
		rec, signer, err := v.newAuditKey(ctx, rand.Reader, v.now())
		if err != nil {
			return err
		}
		err = v.update(ctx, func(t *txn) error {
			keys, err := t.auditKeyRecords()
			if active = activeAuditKey(keys); err != nil || active != nil {
				return err // another instance made one first
			}
			return t.PutRecord(barrier.AuditKey(rec.ID), rec)
		})
		if err != nil {
			return fmt.Errorf("tokenvault: store the audit signing key: %w", err)
		}
		if active == nil {
			v.auditSigner.Store(signer)
			return nil
		}
	}
	_, err := v.unwrapAuditKey(ctx, active)
	return err
}

// unwrapAuditKey opens the private key of rec, checks it against its
// public key and id, and caches it as the signer.
func (v *Vault) unwrapAuditKey(ctx context.Context, rec *auditlog.KeyRecord) (*auditSigner, error) {
	if s := v.auditSigner.Load(); s != nil && s.id == rec.ID {
		return s, nil
	}
	key := barrier.AuditKey(rec.ID).String()
	seed, err := v.wrappers.Load().unwrap(ctx, key, rec.Wrapped)
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("tokenvault: %s: the unwrapped seed is not %d bytes", key, ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if pub := priv.Public().(ed25519.PublicKey); !bytes.Equal(pub, rec.Public) || auditchain.KeyID(pub) != rec.ID {
		return nil, fmt.Errorf("tokenvault: %s: the private key does not match its public key", key)
	}
	s := &auditSigner{id: rec.ID, priv: priv}
	v.auditSigner.Store(s)
	return s, nil
}

// signer is the key in use, read in t: another instance may have rotated
// it since this one cached its signer.
func (t *txn) signer() (*auditSigner, error) {
	keys, err := t.auditKeyRecords()
	if err != nil {
		return nil, err
	}
	active := activeAuditKey(keys)
	if active == nil {
		return nil, fmt.Errorf("tokenvault: the store holds no audit signing key in use")
	}
	return t.v.unwrapAuditKey(t.Ctx, active)
}

// publicKeyOf is the published form of r.
func publicKeyOf(r *auditlog.KeyRecord) auditchain.PublicKey {
	k := auditchain.PublicKey{ID: r.ID, Algorithm: auditKeyAlgorithm, Key: ed25519.PublicKey(bytes.Clone(r.Public)), CreatedAt: r.CreatedAt}
	if !r.RetiredAt.IsZero() {
		at := r.RetiredAt
		k.RetiredAt = &at
	}
	return k
}

// AuditKeys returns the vault's checkpoint signing keys, public parts
// only, oldest first: the key in use (RetiredAt nil) and every key a
// rotation retired, whose checkpoints still verify with it. They are
// public: GET /audit/keys serves them without a key, for verifiers of an
// audit export (auditchain.Checkpoint.VerifySignature).
//
// Returns Internal when the store cannot be read.
func (v *Vault) AuditKeys(ctx context.Context) ([]auditchain.PublicKey, error) {
	var out []auditchain.PublicKey
	err := v.view(ctx, func(t *txn) error {
		keys, err := t.auditKeyRecords()
		out = out[:0]
		for _, k := range keys {
			out = append(out, publicKeyOf(k))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RotateAuditKey makes a new checkpoint signing key, wrapped by the key
// wrapper like the keyrings, and retires the one in use (kept, with its
// retired_at, so that the checkpoints it signed still verify; AuditKeys
// keeps publishing it). Every checkpoint signed from now on uses the new
// key, and each tenant's first such checkpoint is preceded, in its chain,
// by a line recording the rotation (actor system, entity tenant,
// operation update: "Audit signing key rotated from <old id> to <new
// id>"), except a deleted tenant's final checkpoint, which adds no line
// (its keyring goes in the same transaction, so the line could never be
// exported). It returns the new key's public part.
//
// This is a host-program (operator) operation: it takes no API key.
// Returns StorageFull, or Internal when the key wrapper or the store
// fails; nothing changed then.
func (v *Vault) RotateAuditKey(ctx context.Context) (*auditchain.PublicKey, error) {
	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	rec, signer, err := v.newAuditKey(ctx, rand.Reader, v.now())
	if err != nil {
		return nil, v.result(err)
	}
	err = v.update(ctx, func(t *txn) error {
		keys, err := t.auditKeyRecords()
		if err != nil {
			return err
		}
		rec.CreatedAt = t.Now
		for _, k := range keys {
			if k.RetiredAt.IsZero() {
				k.RetiredAt = t.Now
				if err := t.PutRecord(barrier.AuditKey(k.ID), k); err != nil {
					return err
				}
			}
		}
		return t.PutRecord(barrier.AuditKey(rec.ID), rec)
	})
	if err != nil {
		return nil, err
	}
	v.auditSigner.Store(signer)
	pk := publicKeyOf(rec)
	return &pk, nil
}

// rewrapAuditKeys wraps the seed of every signing key again with ws's
// current wrapper, in tx, the transaction of a key wrapper rotation
// (RotateKeyWrapper), so that the keys follow the keyrings.
func rewrapAuditKeys(ctx context.Context, tx *barrier.Tx, ws *wrappers) error {
	vals, err := tx.ScanValues(barrier.AuditKeys)
	if err != nil {
		return err
	}
	for _, sv := range vals {
		pt, err := tx.Open(sv.Key, sv.Raw)
		if err != nil {
			return err
		}
		var r auditlog.KeyRecord
		err = r.DecodeRecord(sv.Key, pt)
		clear(pt)
		if err != nil {
			return fmt.Errorf("tokenvault: decode %s: %w", sv.Key, err)
		}
		seed, err := ws.unwrap(ctx, sv.Key.String(), r.Wrapped)
		if err != nil {
			return err
		}
		r.Wrapped, err = ws.wrap(ctx, sv.Key.String(), seed)
		clear(seed)
		if err != nil {
			return err
		}
		b, release, err := unit.EncodeRecord(&r, sv.Key)
		if err != nil {
			return err
		}
		err = tx.SealPut(sv.Key, b)
		release()
		if err != nil {
			return err
		}
	}
	return nil
}
