package tokenvault

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault/internal/seal"
)

// Re-sealing after a data key rotation.
//
// RotateDataKey makes every new write use the new term at once, and
// records sealed before stay readable under their older terms. So that a
// key rotated out (because it may have leaked, or by policy) soon protects
// nothing, RotateDataKey also schedules the tenant for re-sealing, and
// Reseal, which the background sweeper runs, seals every record of the
// tenant again with the active term. It works resealBatch entries per
// transaction and remembers where it stopped, so a large tenant is done
// in small steps that never hold the store for long, and a restart resumes
// rather than starts over. Only ciphertexts change: values, indexes and
// the audit log stay as they were.

// resealBatch bounds the entries one re-seal transaction visits.
const resealBatch = 500

func resealKey(tid string) string { return sysResealKey + tid }

// Reseal seals again, with the tenant's active data key, every record of
// each tenant whose data key was rotated since its records were last
// re-sealed, and returns how many records it rewrote. The background
// sweeper calls it every Options.SweepInterval; hosts that disable the
// sweeper call it themselves. It needs no API key: it changes no data.
func (v *Vault) Reseal(ctx context.Context) (int, error) {
	// Look first in a read transaction: most of the time nothing is
	// scheduled, and a write transaction would cost a commit.
	pending := false
	err := v.view(ctx, func(t *txn) error {
		return t.tx.Scan([]byte(sysResealKey), nil, 1, func(_, _ []byte) error {
			pending = true
			return nil
		})
	})
	if err != nil || !pending {
		return 0, err
	}
	total := 0
	for {
		n, more, err := v.resealOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// resealOnce re-seals up to resealBatch entries of the first tenant
// scheduled, in one transaction.
func (v *Vault) resealOnce(ctx context.Context) (resealed int, more bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		resealed, more = 0, false
		var marker, cursor []byte
		err := t.tx.Scan([]byte(sysResealKey), nil, 1, func(k, val []byte) error {
			marker, cursor = bytes.Clone(k), bytes.Clone(val)
			return nil
		})
		if err != nil || marker == nil {
			return err
		}
		tid := strings.TrimPrefix(string(marker), sysResealKey)
		ks, err := t.tenantKeys(tid, true)
		if err != nil {
			return err
		}
		active := ks.ring.ActiveTerm()
		var stale []keyValue
		last, visited := cursor, 0
		if len(cursor) == 0 {
			cursor = nil
		}
		err = t.tx.Scan([]byte(tenantPrefix(tid)), cursor, resealBatch, func(k, val []byte) error {
			visited++
			last = bytes.Clone(k)
			if string(k) == tenantKeyringKey(tid) || len(val) == 0 {
				return nil // wrapped by the master key; index entries hold nothing
			}
			if term, ok := seal.Term(val); !ok || term != active {
				stale = append(stale, keyValue{string(k), bytes.Clone(val)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, kv := range stale {
			pt, err := ks.ring.Open([]byte(kv.key), kv.value)
			if err != nil {
				return fmt.Errorf("tokenvault: reseal %s: %w", kv.key, err)
			}
			if err := t.tx.Put([]byte(kv.key), ks.ring.Seal([]byte(kv.key), pt)); err != nil {
				return err
			}
		}
		resealed = len(stale)
		if visited < resealBatch {
			if err := t.tx.Delete(marker); err != nil {
				return err
			}
			return t.log(systemActor, tid, EntityTenant, tid, OpUpdate,
				fmt.Sprintf("Records re-sealed with data key term %d", active))
		}
		more = true
		return t.tx.Put(marker, last)
	})
	return resealed, more, err
}

// scheduleReseal marks tid for re-sealing from its first record.
func (t *txn) scheduleReseal(tid string) error {
	return t.tx.Put([]byte(resealKey(tid)), nil)
}
