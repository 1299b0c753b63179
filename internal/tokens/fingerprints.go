package tokens

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sort"
	"sync"

	"github.com/google/uuid"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The fingerprint index in memory.
//
// Deduplication and ListTokens' fingerprint filter look tokens up by
// fingerprint, a keyed MAC: in the store, that index puts every new token
// into a random leaf of the B-tree, and on bbolt a commit of twenty tokens
// rewrote twenty such leaves and their parents, where every other key a
// token writes (its record, its audit line) appends to a shared page. That
// random leaf was the largest single cost of a durable write (see
// BENCHMARKS.md).
//
// So on a store one process holds (bbolt, memory: store.SingleProcess)
// the index lives in memory only, rebuilt when the Vault opens from the
// token records themselves (each holds its fingerprint), and no index
// entry is written. On a shared store (PostgreSQL) every instance writes
// and reads the index in the store, as before. The store records where
// its index is (sys/fingerprints), and one whose index is in memory is
// refused as a shared store, whose lookups would miss its tokens. Records
// written with an entry (before this change) keep it until they are
// rewritten or deleted; the entries are no longer read.
//
// The memory index may hold more than the store: an entry is added when a
// token is written, before its transaction commits (so that a transaction
// sharing a commit with it, or starting right after, finds it) and stays
// if that transaction fails or runs again (a few stale entries, which a
// restart drops), and an entry is removed only once the deletion has
// committed. One race is left: a token deleted while a token with the same
// custom id and value is created may lose its entry, so deduplication and
// the fingerprint filter miss it until the next restart. Every lookup
// therefore loads each candidate from its own transaction and keeps only
// live tokens with that very fingerprint (an entry is keyed by the first 8
// bytes of it). An optimistic first run (unit.Work.UpdateOptimistic) also remembers the
// candidates it saw, and runs again if they changed before its write.

// FingerprintMemory is the fingerprint index of every tenant.
type FingerprintMemory struct {
	mu      sync.RWMutex
	tenants map[string]*tenantFingerprints
}

// tenantFingerprints maps fingerprint slots to token ids. Nearly every
// slot holds one token with a generated id, kept as its 16 bytes in one
// (24 bytes an entry: a million tokens take some 30 MB); the others (more
// tokens with the same fingerprint, custom ids) go to more, a set, so that
// adding the millionth token of one value costs what the first did.
type tenantFingerprints struct {
	one  map[uint64]uuid.UUID
	more map[uint64]map[string]struct{}
}

// fingerprintEntry is one token in the index.
type fingerprintEntry struct {
	tid, fp, id string
}

// fingerprintSlot is the slot of a fingerprint: its first 8 bytes. A
// fingerprint that is not hex (none is written so) gets slot 0, and lookups
// still compare the whole fingerprint.
func fingerprintSlot(fp string) uint64 {
	var b [8]byte
	if len(fp) < 16 {
		return 0
	}
	if _, err := hex.Decode(b[:], []byte(fp[:16])); err != nil {
		return 0
	}
	return binary.BigEndian.Uint64(b[:])
}

// generatedID returns the 16 bytes of a canonical UUID id.
func generatedID(id string) (uuid.UUID, bool) {
	if !unit.ValidID(id) {
		return uuid.UUID{}, false
	}
	return uuid.MustParse(id), true
}

// add indexes e, reporting whether it was not there yet.
func (m *FingerprintMemory) add(e fingerprintEntry) bool {
	slot := fingerprintSlot(e.fp)
	m.mu.Lock()
	defer m.mu.Unlock()
	tf := m.tenants[e.tid]
	if tf == nil {
		if m.tenants == nil {
			m.tenants = map[string]*tenantFingerprints{}
		}
		tf = &tenantFingerprints{one: map[uint64]uuid.UUID{}, more: map[uint64]map[string]struct{}{}}
		m.tenants[e.tid] = tf
	}
	u, generated := generatedID(e.id)
	_, inMore := tf.more[slot][e.id]
	if cur, ok := tf.one[slot]; ok && generated && cur == u || inMore {
		return false
	}
	if _, taken := tf.one[slot]; generated && !taken {
		tf.one[slot] = u
		return true
	}
	if tf.more[slot] == nil {
		tf.more[slot] = map[string]struct{}{}
	}
	tf.more[slot][e.id] = struct{}{}
	return true
}

// remove forgets e.
func (m *FingerprintMemory) remove(e fingerprintEntry) {
	slot := fingerprintSlot(e.fp)
	m.mu.Lock()
	defer m.mu.Unlock()
	tf := m.tenants[e.tid]
	if tf == nil {
		return
	}
	if u, ok := generatedID(e.id); ok && tf.one[slot] == u {
		delete(tf.one, slot)
		return
	}
	delete(tf.more[slot], e.id)
	if len(tf.more[slot]) == 0 {
		delete(tf.more, slot)
	}
}

// ids returns the candidates for fingerprint fp of tenant tid, sorted.
func (m *FingerprintMemory) ids(tid, fp string) []string {
	slot := fingerprintSlot(fp)
	m.mu.RLock()
	var ids []string
	if tf := m.tenants[tid]; tf != nil {
		if u, ok := tf.one[slot]; ok {
			ids = append(ids, u.String())
		}
		for id := range tf.more[slot] {
			ids = append(ids, id)
		}
	}
	m.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// DropTenant forgets a deleted tenant.
func (m *FingerprintMemory) DropTenant(tid string) {
	m.mu.Lock()
	delete(m.tenants, tid)
	m.mu.Unlock()
}

// errFingerprintsInMemory refuses to open, as a shared store, a store whose
// fingerprint index is kept in memory.
var errFingerprintsInMemory = unit.Errorf(unit.Invalid, "this store keeps its fingerprint index in memory, as a store one "+
	"process holds: open it as such (a bbolt file, not through a wrapper that hides store.SingleProcess)")

// PlaceFingerprints records, on first open, where the store's index is
// kept (mem nil: in the store), and refuses to open a store whose index
// is in memory as a shared one (Invalid).
func PlaceFingerprints(ctx context.Context, w *unit.Work, mem *FingerprintMemory) error {
	var place FingerprintPlace
	var found bool
	if err := w.View(ctx, func(t *unit.Tx) error {
		var err error
		found, err = t.GetRecord(barrier.SysFingerprints, &place)
		return err
	}); err != nil {
		return err
	}
	switch {
	case found && place.InMemory && mem == nil:
		return errFingerprintsInMemory
	case found || mem == nil:
		return nil
	}
	return w.Update(ctx, func(t *unit.Tx) error {
		return t.PutRecord(barrier.SysFingerprints, &FingerprintPlace{InMemory: true})
	})
}

// LoadFingerprints builds the memory index mem from every token record,
// at open.
func LoadFingerprints(ctx context.Context, w *unit.Work, mem *FingerprintMemory) error {
	return w.View(ctx, func(t *unit.Tx) error {
		var tenants []string
		if err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			tenants = append(tenants, tid)
			return nil
		}); err != nil {
			return err
		}
		// A page at a time: copying a million records at once would
		// leave the process holding their memory long after.
		const page = 1000
		for _, tid := range tenants {
			after := ""
			for {
				raws, err := t.ScanValuesAfter(barrier.Tenant(tid).Records(Kind), after, page)
				if err != nil {
					return err
				}
				for _, kv := range raws {
					var rec Record
					if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
						return err
					}
					if rec.Fingerprint != "" {
						mem.add(fingerprintEntry{tid, rec.Fingerprint, rec.ID})
					}
				}
				if len(raws) < page {
					break
				}
				after = raws[len(raws)-1].Rest
			}
		}
		return nil
	})
}

// FingerprintIDs returns the ids of tokens that may have fingerprint fp:
// from the memory index mem, or the store's when mem is nil. Callers load
// each and compare.
func FingerprintIDs(t *unit.Tx, mem *FingerprintMemory, tid, fp string) ([]string, error) {
	if mem == nil {
		return IndexedIDs(t, barrier.Tenant(tid).FingerprintIndex(fp))
	}
	ids := mem.ids(tid, fp)
	t.ReadOutside(func() bool { return slices.Equal(mem.ids(tid, fp), ids) })
	return ids, nil
}

// IndexedIDs lists the ids under an index prefix, sorted.
func IndexedIDs(t *unit.Tx, prefix barrier.Prefix) ([]string, error) {
	var ids []string
	err := t.ScanKeys(prefix, func(_ barrier.Key, id string) error {
		ids = append(ids, id)
		return nil
	})
	sort.Strings(ids)
	return ids, err
}

// IndexFingerprint adds a token just written to the memory index mem (see
// above; nothing when nil). The entry stays if the transaction does not
// commit: removing it could remove what another transaction, writing the
// same token id, has added meanwhile, and a stale entry only costs a
// lookup.
func IndexFingerprint(t *unit.Tx, mem *FingerprintMemory, rec *Record) {
	if mem == nil || rec.Fingerprint == "" {
		return
	}
	e := fingerprintEntry{rec.TenantID, rec.Fingerprint, rec.ID}
	c := fingerprintChangesOf(t, mem)
	c.written = append(c.written, e)
	mem.add(e)
}

// UnindexFingerprint removes a token's entry from mem (nothing when nil)
// once the transaction that deletes it (or changes its fingerprint) has
// committed.
func UnindexFingerprint(t *unit.Tx, mem *FingerprintMemory, rec *Record) {
	if mem == nil || rec.Fingerprint == "" {
		return
	}
	c := fingerprintChangesOf(t, mem)
	c.removed = append(c.removed, fingerprintEntry{rec.TenantID, rec.Fingerprint, rec.ID})
}

// fingerprintChange is a transaction's changes to the memory index: the
// removals wait for its commit, which applies them (but for the entries
// it wrote again).
type fingerprintChange struct{ written, removed []fingerprintEntry }

var fingerprintChanges unit.Local[fingerprintChange]

// fingerprintChangesOf is t's changes to mem, made (and applied on
// commit) on first use.
func fingerprintChangesOf(t *unit.Tx, mem *FingerprintMemory) *fingerprintChange {
	if c, ok := fingerprintChanges.Peek(t); ok {
		return c
	}
	c := fingerprintChanges.Of(t)
	t.OnFinish(func(committed bool) {
		if !committed {
			return
		}
		for _, e := range c.removed {
			if !slices.Contains(c.written, e) { // deleted, not written again
				mem.remove(e)
			}
		}
	})
	return c
}
