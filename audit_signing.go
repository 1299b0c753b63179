package tokenvault

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Checkpoints: signed chain heads, by auditlog.Checkpointer
// (docs/audit-chain.md). The root runs its timed pass and serves
// SignAuditChain.

// runCheckpointer runs the timed checkpoint pass (checkpointOld) under
// v.bg until Close, while this instance holds the linker lease: the heads
// are the linker's to write, so that two instances' passes never sign
// (and write) one head at once.
func (v *Vault) runCheckpointer() {
	ctx := v.bg
	tick := time.NewTicker(auditlog.CheckpointTick(v.chainOpts.CheckpointInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if v.linkLease().Held() == 0 {
			continue
		}
		if _, err := v.checkpointOld(ctx, v.chainOpts.CheckpointInterval); err != nil && ctx.Err() == nil {
			v.logger.Error("tokenvault: signing audit checkpoints failed", "err", err)
		}
	}
}

// SignAuditChain signs tenant tenantID's audit chain head now, with the
// signing key in use, and returns the checkpoint. Every line written
// before the call is included: this instance links them first when it
// holds the linker lease or can take it, and otherwise waits for the
// instance that holds it to link them, up to twice
// AuditChainOptions.LinkerLease (past that, a linker that is stuck, it
// signs what is linked, and the rest is left to the next checkpoint).
// When every line is signed already by that key, it returns the last
// checkpoint instead; when every line is
// signed already by that key, it returns the last checkpoint instead
// (after RotateAuditKey, the head is signed again with the new key,
// after the line recording the rotation). The checkpoint
// is also queued for audit export. Checkpoints are otherwise signed every
// Options.AuditChain.CheckpointEvery lines and CheckpointInterval after an
// unsigned line; this one is for an auditor who wants the head signed
// now (before an export, or an inspection).
//
// This is a host-program (operator) operation: it takes no API key.
// Returns NotFound for an unknown or deleted tenant, StorageFull, or
// Internal.
func (v *Vault) SignAuditChain(ctx context.Context, tenantID string) (*auditchain.Checkpoint, error) {
	if !unit.ValidID(tenantID) {
		return nil, unit.NotFoundError("tenant")
	}
	// The queued lines are linked first, so that the checkpoint covers
	// every line written before the call.
	through := barrier.TimeKey(v.now())
	if err := v.linkNow(ctx); err != nil {
		return nil, err
	}
	if err := v.awaitLinked(ctx, tenantID, through); err != nil {
		return nil, err
	}
	var out auditchain.Checkpoint
	err := v.update(ctx, func(t *txn) error {
		reg, err := t.Has(barrier.Tenant(tenantID).Registry())
		if err != nil {
			return err
		}
		if !reg {
			return unit.NotFoundError("tenant")
		}
		h := auditlog.Head{FirstSeq: 1, Since: t.Now}
		if _, err := t.GetRecord(barrier.Tenant(tenantID).ChainHead(), &h); err != nil {
			return err
		}
		s, err := t.signer()
		if err != nil {
			return err
		}
		if h.Seq == h.SignedSeq && h.KeyID == s.ID {
			var rec auditlog.CheckpointRecord
			ok, err := t.GetRecord(barrier.Tenant(tenantID).Checkpoint(h.SignedSeq), &rec)
			if err != nil {
				return err
			}
			if ok {
				out = rec.Checkpoint()
				return nil
			}
		}
		if out, err = t.v.checkpoints.Sign(t.Tx, tenantID, &h, false); err != nil {
			return err
		}
		return t.PutRecord(barrier.Tenant(tenantID).ChainHead(), &h)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// awaitLinked waits until no line of tenant tid written at or before
// through (a TimeKey) waits in the chain queue, polling, up to twice the
// linker lease; it returns nil then too (what is linked is signed), and
// an error only for a store failure or ctx's end.
func (v *Vault) awaitLinked(ctx context.Context, tid, through string) error {
	deadline := time.Now().Add(2 * v.chainOpts.LinkerLease)
	for {
		waiting := false
		err := v.view(ctx, func(t *txn) error {
			waiting = false
			return t.Scan(barrier.ChainQueue, "", 0, func(_ barrier.Key, rest string) error {
				nanos, r, _ := strings.Cut(rest, "/")
				if nanos > through {
					return barrier.ErrStop // in time order: the rest are later
				}
				if strings.HasPrefix(r, tid+"/") {
					waiting = true
					return barrier.ErrStop
				}
				return nil
			})
		})
		if err != nil || !waiting || time.Now().After(deadline) {
			return err
		}
		if err := v.linkNow(ctx); err != nil { // the lease may have come free
			return err
		}
		select {
		case <-ctx.Done():
			return v.result(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// signFinalCheckpoint signs the final checkpoint of tenant tid's chain,
// in t, the transaction of its deletion that removes its keyring
// (auditlog.Checkpointer.SignFinal).
func (t *txn) signFinalCheckpoint(tid string) error { return t.v.checkpoints.SignFinal(t.Tx, tid) }

// checkpointOld runs the timed pass once (auditlog.Checkpointer.SignOld).
func (v *Vault) checkpointOld(ctx context.Context, interval time.Duration) (int, error) {
	return v.checkpoints.SignOld(ctx, interval)
}

// The checkpoint signing keys (docs/audit-chain.md).
//
// The vault signs its chain heads (checkpoints.go) with an Ed25519 key of
// its own, made on the first Open of a store. The key is held under the
// root of trust like the keyrings: its record, sys/audit-key/<key id>
// (auditlog.KeyRecord), holds the public key and the 32-byte seed wrapped by
// the key wrapper for that store key, and is sealed by the system keyring;
// RotateKeyWrapper (and so RotateMasterKey) wraps the seed again with the
// keyrings, in the same transaction. The private key is unwrapped when
// first needed and kept in memory (auditlog.Signer); it is never logged,
// returned or stored unwrapped.
//
// RotateAuditKey makes a new key and retires the one in use: a retired key
// is kept, with its retired_at, so the checkpoints it signed still verify,
// and AuditKeys (GET /audit/keys) publishes every key. The rotation is
// recorded in every tenant's chain: the first checkpoint of a tenant
// signed with a key other than its last checkpoint's is preceded, in the
// same transaction, by a chained line (actor system, entity tenant,
// operation update) naming both key ids.

// newAuditKey makes a key from r, its seed wrapped by the current key
// wrapper for its store key, created at now. The caller holds wrapMu for
// reading, so that no wrapper rotation leaves it under the old wrapper.
func (v *Vault) newAuditKey(ctx context.Context, r io.Reader, now time.Time) (*auditlog.KeyRecord, *auditlog.Signer, error) {
	ws := v.wrappers.Load()
	return auditlog.NewKey(r, now, func(key string, seed []byte) ([]byte, error) { return ws.wrap(ctx, key, seed) })
}

// ensureAuditKey makes the store's first signing key when it has none,
// at Open, and unwraps the key in use.
func (v *Vault) ensureAuditKey(ctx context.Context) error {
	var active *auditlog.KeyRecord
	if err := v.view(ctx, func(t *txn) error {
		keys, err := auditlog.KeyRecords(t.Tx)
		active = auditlog.ActiveKey(keys)
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
			keys, err := auditlog.KeyRecords(t.Tx)
			if active = auditlog.ActiveKey(keys); err != nil || active != nil {
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

// unwrapAuditKey opens the private key of rec (auditlog.OpenKey) and
// caches it as the signer.
func (v *Vault) unwrapAuditKey(ctx context.Context, rec *auditlog.KeyRecord) (*auditlog.Signer, error) {
	if s := v.auditSigner.Load(); s != nil && s.ID == rec.ID {
		return s, nil
	}
	ws := v.wrappers.Load()
	s, err := auditlog.OpenKey(rec, func(key string, wrapped []byte) ([]byte, error) { return ws.unwrap(ctx, key, wrapped) })
	if err != nil {
		return nil, err
	}
	v.auditSigner.Store(s)
	return s, nil
}

// signer is the key in use, read in t: another instance may have rotated
// it since this one cached its signer.
func (t *txn) signer() (*auditlog.Signer, error) {
	keys, err := auditlog.KeyRecords(t.Tx)
	if err != nil {
		return nil, err
	}
	active := auditlog.ActiveKey(keys)
	if active == nil {
		return nil, fmt.Errorf("tokenvault: the store holds no audit signing key in use")
	}
	return t.v.unwrapAuditKey(t.Ctx, active)
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
		keys, err := auditlog.KeyRecords(t.Tx)
		out = out[:0]
		for _, k := range keys {
			out = append(out, auditlog.PublicKeyOf(k))
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
		keys, err := auditlog.KeyRecords(t.Tx)
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
	pk := auditlog.PublicKeyOf(rec)
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
