package barrier

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// Wrapper wraps and unwraps key material for the store key it is stored
// at (its additional data): the Vault's current key wrapper, with the
// previous ones that only unwrap. The root implements it over its
// KeyWrappers (keywrap.go there), so the barrier never sees one.
type Wrapper interface {
	WrapKeys(ctx context.Context, storeKey string, plaintext []byte) ([]byte, error)
	UnwrapKeys(ctx context.Context, storeKey string, raw []byte) ([]byte, error)
}

// Config is what the barrier needs from the Vault above it, given once
// at New: the barrier imports nothing of the root (it cannot).
type Config struct {
	// Store is where the bytes go.
	Store store.Store
	// Wrapper wraps the keyrings.
	Wrapper Wrapper
	// Now is the Vault's clock, for the freshness of cached keyrings.
	Now func() time.Time
	// TenantGone is the error to answer with for a key of a tenant whose
	// keyring is not in the store (deleted with its tenant, or never
	// there): the Vault's own, which its callers recognise.
	TenantGone error
	// Counts encodes and decodes the kept counts the barrier keeps
	// (AddCount, FlushCounts): the record format is the Vault's, since
	// the barrier knows no record formats.
	Counts CountCodec
	// Instance names the Vault among those sharing the store: the delta
	// rows of counts it writes are its own (counts.go). It must differ
	// between the Vaults of one store, and is not secret.
	Instance string
}

// CountCodec is the stored form of a kept count.
type CountCodec interface {
	// EncodeCount encodes n for the count at k.
	EncodeCount(k Key, n int64) []byte
	// DecodeCount decodes the plaintext b of the count at k.
	DecodeCount(k Key, b []byte) (int64, error)
}

// Barrier is the only holder of the store: every transaction goes
// through it, as a Tx.
type Barrier struct {
	store   store.Store
	wrapper Wrapper
	now     func() time.Time
	gone    error
	counts  CountCodec
	// single is whether one process holds the store (store.SingleProcess):
	// then nothing changes a keyring behind the cache, and reads may run
	// optimistically (optimistic.go).
	single bool
	// sys is the system keyring (LoadSystemKeys).
	sys *Keys
	// tenants caches unwrapped keyrings: tenant id -> *Keys.
	tenants sync.Map
	keysMu  sync.Mutex // serializes CacheKeys
	appends appendPath
	// instance is Config.Instance; deltaSeq numbers the delta rows it
	// writes, deltas writes them, and fold is the folder's state
	// (counts.go, counts_fold.go).
	instance string
	deltaSeq atomic.Uint64
	deltas   *countWriter
	fold     foldState
}

// New is the barrier over cfg.Store. Call LoadSystemKeys before any
// transaction but Keyring's.
func New(cfg Config) *Barrier {
	b := &Barrier{store: cfg.Store, wrapper: cfg.Wrapper, now: cfg.Now, gone: cfg.TenantGone, counts: cfg.Counts, instance: cfg.Instance}
	b.deltas = &countWriter{b}
	b.fold.wake = make(chan struct{}, 1)
	_, b.single = cfg.Store.(store.SingleProcess)
	if ap, ok := cfg.Store.(store.Appender); ok && b.single {
		b.appends.store = ap
	}
	return b
}

// SingleProcess reports whether one process holds the store
// (store.SingleProcess): the Vault keeps its auth cache, its fingerprint
// index and its optimistic runs for such a store.
func (b *Barrier) SingleProcess() bool { return b.single }

// Close closes the store.
func (b *Barrier) Close() error { return b.store.Close() }

func (b *Barrier) newTx(ctx context.Context, tx store.Tx) *Tx {
	return &Tx{b: b, tx: tx, ctx: ctx, now: b.now().UTC()}
}

// View runs fn in a read-only store transaction; the keyrings it read
// join the cache (a read transaction sees only committed data).
func (b *Barrier) View(ctx context.Context, fn func(*Tx) error) error {
	var last *Tx
	err := b.store.View(ctx, func(stx store.Tx) error {
		last = b.newTx(ctx, stx)
		return fn(last)
	})
	if last != nil {
		b.cacheRead(last)
	}
	return err
}

// Update runs fn in a read-write store transaction (which the store may
// run more than once, each time with a new Tx): everything it writes
// lands together or not at all. Once committed, the keyrings the last run
// read join the cache; a keyring read inside a batch may have been
// written by a transaction that rolls back, and sealing with it would
// make records nobody can open.
func (b *Barrier) Update(ctx context.Context, fn func(*Tx) error) error {
	var last *Tx
	err := b.store.Update(ctx, func(stx store.Tx) error {
		last = b.newTx(ctx, stx)
		return fn(last)
	})
	if err == nil && last != nil {
		b.cacheRead(last)
	}
	return err
}

// Keyring runs fn in a store transaction (read-write when write) without
// the keyring cache: for the work on keyrings themselves (opening the
// store, rotating the key wrapper), which must see the store's and the
// wrapper's errors as they are.
func (b *Barrier) Keyring(ctx context.Context, write bool, fn func(*Tx) error) error {
	run := func(stx store.Tx) error { return fn(b.newTx(ctx, stx)) }
	if write {
		return b.store.Update(ctx, run)
	}
	return b.store.View(ctx, run)
}

// TenantGone is the error it answers with for a key of a tenant whose
// keyring is gone (Config.TenantGone), for background work that skips
// such keys.
func (b *Barrier) TenantGone() error { return b.gone }

// ErrNoSnapshot is what Backup answers for a store that cannot write a
// consistent snapshot while it serves.
var ErrNoSnapshot = errors.New("barrier: the store cannot snapshot")

// Backup writes a consistent snapshot of the store to w
// (store.Snapshotter), sealed as the store is.
func (b *Barrier) Backup(ctx context.Context, w io.Writer) error {
	s, ok := b.store.(store.Snapshotter)
	if !ok {
		return ErrNoSnapshot
	}
	_, err := s.WriteSnapshot(ctx, w)
	return err
}

// ProbeWrite writes value (random bytes: nothing) at SysReadyProbe, then
// deletes it, in two commits: whether the store takes writes again.
func (b *Barrier) ProbeWrite(ctx context.Context, value []byte) error {
	k := []byte(SysReadyProbe.s)
	err := b.store.Update(ctx, func(tx store.Tx) error { return tx.Put(k, value) })
	if err == nil {
		err = b.store.Update(ctx, func(tx store.Tx) error { return tx.Delete(k) })
	}
	return err
}
