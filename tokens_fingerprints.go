package tokenvault

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
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
// BENCHMARKS.md, issue 21).
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
// bytes of it). An optimistic first run (optimistic.go) also remembers the
// candidates it saw, and runs again if they changed before its write.

// fingerprintMemory is the fingerprint index of every tenant.
type fingerprintMemory struct {
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
func (m *fingerprintMemory) add(e fingerprintEntry) bool {
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
func (m *fingerprintMemory) remove(e fingerprintEntry) {
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
func (m *fingerprintMemory) ids(tid, fp string) []string {
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

// dropTenant forgets a deleted tenant.
func (m *fingerprintMemory) dropTenant(tid string) {
	m.mu.Lock()
	delete(m.tenants, tid)
	m.mu.Unlock()
}

// errFingerprintsInMemory refuses to open, as a shared store, a store whose
// fingerprint index is kept in memory.
var errFingerprintsInMemory = unit.Errorf(Invalid, "this store keeps its fingerprint index in memory, as a store one "+
	"process holds: open it as such (a bbolt file, not through a wrapper that hides store.SingleProcess)")

// placeFingerprints records, on first open, where the store's index is
// kept, and refuses to open a store whose index is in memory as a shared
// one.
func (v *Vault) placeFingerprints(ctx context.Context) error {
	var place tokens.FingerprintPlace
	var found bool
	if err := v.view(ctx, func(t *txn) error {
		var err error
		found, err = t.GetRecord(barrier.SysFingerprints, &place)
		return err
	}); err != nil {
		return err
	}
	switch {
	case found && place.InMemory && v.fingerprints == nil:
		return errFingerprintsInMemory
	case found || v.fingerprints == nil:
		return nil
	}
	return v.update(ctx, func(t *txn) error {
		return t.PutRecord(barrier.SysFingerprints, &tokens.FingerprintPlace{InMemory: true})
	})
}

// loadFingerprints builds the memory index from every token record, at
// open.
func (v *Vault) loadFingerprints(ctx context.Context) error {
	return v.view(ctx, func(t *txn) error {
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
				raws, err := t.ScanValuesAfter(barrier.Tenant(tid).Records(tokens.Kind), after, page)
				if err != nil {
					return err
				}
				for _, kv := range raws {
					var rec tokens.Record
					if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
						return err
					}
					if rec.Fingerprint != "" {
						v.fingerprints.add(fingerprintEntry{tid, rec.Fingerprint, rec.ID})
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

// fingerprintIDs returns the ids of tokens that may have fingerprint fp:
// from the memory index, or the store's. Callers load each and compare.
func (t *txn) fingerprintIDs(tid, fp string) ([]string, error) {
	if t.v.fingerprints == nil {
		return t.indexedIDs(barrier.Tenant(tid).FingerprintIndex(fp))
	}
	ids := t.v.fingerprints.ids(tid, fp)
	t.ReadOutside(func() bool { return slices.Equal(t.v.fingerprints.ids(tid, fp), ids) })
	return ids, nil
}

// indexFingerprint adds a token just written to the memory index (see
// above). The entry stays if the transaction does not commit: removing it
// could remove what another transaction, writing the same token id, has
// added meanwhile, and a stale entry only costs a lookup.
func (t *txn) indexFingerprint(rec *tokens.Record) {
	if t.v.fingerprints == nil || rec.Fingerprint == "" {
		return
	}
	e := fingerprintEntry{rec.TenantID, rec.Fingerprint, rec.ID}
	c := fingerprintChanges.of(t)
	c.written = append(c.written, e)
	t.v.fingerprints.add(e)
}

// unindexFingerprint removes a token's entry once the transaction that
// deletes it (or changes its fingerprint) has committed.
func (t *txn) unindexFingerprint(rec *tokens.Record) {
	if t.v.fingerprints == nil || rec.Fingerprint == "" {
		return
	}
	c := fingerprintChanges.of(t)
	c.removed = append(c.removed, fingerprintEntry{rec.TenantID, rec.Fingerprint, rec.ID})
}

// fingerprintChange is a transaction's changes to the memory index: the
// removals wait for its commit, which applies them (but for the entries
// it wrote again).
type fingerprintChange struct{ written, removed []fingerprintEntry }

var fingerprintChanges = &txnLocal[fingerprintChange]{finish: func(t *txn, c *fingerprintChange, committed bool) {
	if !committed {
		return
	}
	for _, e := range c.removed {
		if !slices.Contains(c.written, e) { // deleted, not written again
			t.v.fingerprints.remove(e)
		}
	}
}}
