package tokenvault

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The unit of work. The barrier (internal/barrier) is the only holder of
// the store: a txn is one of its transactions (a barrier.Tx, embedded,
// which seals values on the way in and opens them on the way out) seen
// through the Vault: it encodes and decodes records (records.go), and
// carries what the Vault's features did in it until it ends, as hooks
// they registered (txn_hooks.go), not as fields of their own.

// txn is one store transaction seen through the Vault.
type txn struct {
	*barrier.Tx
	v   *Vault
	now time.Time
	// ctx is the call's context, for recording into its CallInfo.
	ctx context.Context
	// authGen is the auth cache's generation read before the store
	// transaction began: what a principal read in it may be cached under.
	authGen uint64
	// unchecked is code this transaction found unchecked (see checkCode);
	// updateChecked checks it and runs the transaction again. It is not a
	// hook: it is read when the transaction function returns, to decide
	// to run it again, and never after a commit.
	unchecked *uncheckedCode
	// listShapes caches the lists and counts of the token shapes this
	// transaction resolved (tokens_lists_shapes.go): a memo of its
	// function, read and written while it runs.
	listShapes map[string]*listShape
	// hooks are what features registered to run when the transaction
	// ends, and locals their state (txn_hooks.go).
	hooks  []func(committed bool)
	locals []txnLocalValue
}

// newTxn is the txn of barrier transaction tx, for a call under ctx whose
// auth cache generation was gen when it began.
func (v *Vault) newTxn(ctx context.Context, tx *barrier.Tx, gen uint64) *txn {
	t := &txn{Tx: tx, v: v, now: v.now().UTC(), ctx: ctx, authGen: gen}
	tx.OnAuthChange(func() {
		// Void the cache before the caller hears of the change; on a
		// failed commit too, since a backend may fail after writing.
		// Then wait for the appends that checked the generation before
		// (appends.go).
		t.onFinish(func(bool) {
			v.auth.invalidate()
			v.barrier.AppendsSettled()
		})
	})
	return t
}

// view runs fn in a read-only store transaction.
func (v *Vault) view(ctx context.Context, fn func(*txn) error) error {
	ctx = unit.WithCall(ctx)
	gen := v.auth.gen.Load()
	err := v.barrier.View(ctx, func(tx *barrier.Tx) error {
		return fn(v.newTxn(ctx, tx, gen))
	})
	return v.result(err)
}

// update runs fn in a read-write store transaction: everything fn writes,
// audit log lines included, lands together or not at all.
func (v *Vault) update(ctx context.Context, fn func(*txn) error) error {
	ctx = unit.WithCall(ctx)
	var last *txn
	gen := v.auth.gen.Load()
	err := v.barrier.Update(ctx, func(tx *barrier.Tx) error {
		last = v.newTxn(ctx, tx, gen)
		if err := fn(last); err != nil {
			return err
		}
		return last.commit()
	})
	return v.finish(last, err)
}

// commit adds to t what its store commit writes besides what its
// function wrote: the kept counts, and the auth generation's advance
// (auth_cache.go). (Its audit lines are chained beside the commit, by the
// linker: chain.go.)
func (t *txn) commit() error {
	if err := t.FlushCounts(); err != nil {
		return err
	}
	return t.advanceAuthGeneration()
}

// finish ends a write transaction whose last run was last (nil if it
// never ran) and which ended with err: it runs the hooks last's features
// registered, told whether it committed.
func (v *Vault) finish(last *txn, err error) error {
	if last != nil {
		last.finished(err == nil)
	}
	return v.result(err)
}

// getRecord opens the record at key into dst. It reports false when the key
// does not exist.
func (t *txn) getRecord(key barrier.Key, dst recordCodec) (bool, error) {
	b, ok, err := t.GetOpen(key)
	if err != nil || !ok {
		return false, err
	}
	return true, t.decodeRecord(key, b, dst)
}

// openRecord decrypts and decodes a raw value stored at key.
func (t *txn) openRecord(key barrier.Key, raw []byte, dst recordCodec) error {
	b, err := t.Open(key, raw)
	if err != nil {
		return err
	}
	return t.decodeRecord(key, b, dst)
}

// decodeRecord decodes b, the plaintext stored at key, into dst in its
// record's own encoding (records.go), and clears b.
func (t *txn) decodeRecord(key barrier.Key, b []byte, dst recordCodec) error {
	err := dst.decodeRecord(key, b)
	clear(b) // the plaintext may hold token data
	if err != nil {
		return fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return nil
}

// putRecord seals v under key with its tenant's active data key, or the
// system keyring for a key of no tenant: in its own encoding when it has
// one (a recordCodec, records.go), else as JSON.
func (t *txn) putRecord(key barrier.Key, v recordCodec) error {
	b, release, err := t.encodeRecord(key, v)
	if err != nil {
		return err
	}
	defer release()
	return t.SealPut(key, b)
}

// appendRecord is putRecord for a record whose key is new by construction
// (an audit line): nothing reads it before it is written, so a store may
// take it as an append (appends.go).
func (t *txn) appendRecord(key barrier.Key, v recordCodec) error {
	b, release, err := t.encodeRecord(key, v)
	if err != nil {
		return err
	}
	defer release()
	return t.SealAppend(key, b)
}

// encodeRecord encodes v for key (see putRecord); release gives its
// buffer back once sealed.
func (t *txn) encodeRecord(key barrier.Key, v recordCodec) (b []byte, release func(), err error) {
	return encodeRecord(v, key)
}

// getPlain decodes the plain record stored at key (a progress marker,
// which holds nothing secret: see internal/barrier's doc) into dst. It
// reports false when the key does not exist.
func (t *txn) getPlain(key barrier.Key, dst recordCodec) (bool, error) {
	raw, ok, err := t.GetPlain(key)
	if err != nil || !ok {
		return false, err
	}
	if err := dst.decodeRecord(key, raw); err != nil {
		return true, fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return true, nil
}

// putPlain stores the record v at key unsealed: only for the progress
// markers internal/barrier's doc lists, which hold store keys and times.
func (t *txn) putPlain(key barrier.Key, v recordCodec) error {
	b, err := v.appendRecord(nil, key)
	if err != nil {
		return fmt.Errorf("tokenvault: encode %s: %w", key, err)
	}
	return t.PutPlain(key, b)
}
