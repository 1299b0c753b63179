package tokenvault

import (
	"context"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// listBuildBatch is how many token records one transaction of the build
// lists.
const listBuildBatch = 1000

// buildTokenLists gives a store written before the token list indexes
// existed its list index entries and counts (tokens_lists.go), and the
// counts of its other counted records (countedKinds), once: Open
// calls it before it serves anything, and it visits every tenant's token
// records, listBuildBatch a transaction, each transaction listing its
// records, adding them to the counts and recording how far it got, so a
// build cut short goes on where it stopped and counts each token once. A
// store that is new, or already built, costs one read. Tenants being
// deleted are passed by: their records go.
//
// Every Vault sharing a store (PostgreSQL) must be of a version that keeps
// the lists: an older one would write tokens they do not list.
func (v *Vault) buildTokenLists(ctx context.Context) error {
	var st listBuild
	tenants := false
	err := v.view(ctx, func(t *txn) error {
		if _, err := t.getRecord(barrier.SysLists, &st); err != nil || st.Done {
			return err
		}
		return t.Scan(barrier.TenantRegistry, "", 1, func(barrier.Key, string) error {
			tenants = true
			return nil
		})
	})
	if err != nil || st.Done {
		return err
	}
	// A store from an earlier version (a new one has no tenant yet): say
	// so, since a large one takes a while (about as long as writing its
	// tokens' index entries).
	start, batches := time.Now(), 0
	if tenants {
		v.logger.Info("tokenvault: building the token list indexes and counts of a store written by an earlier version")
	}
	for err == nil && !st.Done {
		err = v.update(ctx, func(t *txn) error {
			st = listBuild{}
			_, err := t.getRecord(barrier.SysLists, &st)
			if err != nil || st.Done {
				return err
			}
			return t.buildTokenListsOnce(&st)
		})
		batches++
	}
	if err == nil && tenants {
		v.logger.Info("tokenvault: built the token list indexes and counts", "transactions", batches,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	return err
}

// buildTokenListsOnce lists up to listBuildBatch records after st and
// records its progress in st and the store.
func (t *txn) buildTokenListsOnce(st *listBuild) error {
	var tenants []string
	err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
		if tid >= st.Tenant {
			tenants = append(tenants, tid)
		}
		return nil
	})
	if err != nil {
		return err
	}
	visited := 0
	for _, tid := range tenants {
		deleting, err := t.tenantDeleting(tid)
		if err != nil {
			return err
		}
		if deleting {
			continue
		}
		if tid != st.Tenant {
			st.Tenant, st.After = tid, ""
			if err := t.buildRecordCounts(tid); err != nil {
				return err
			}
		}
		prefix := barrier.Tenant(tid).Records(kindToken)
		kvs, err := t.ScanValuesAfter(prefix, strings.TrimPrefix(st.After, prefix.String()), listBuildBatch-visited)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			visited++
			st.After = kv.Key.String()
			var rec tokenRecord
			if err := t.openRecord(kv.Key, kv.Raw, &rec); err != nil {
				return err
			}
			if err := t.listToken(&rec); err != nil {
				return err
			}
		}
		if visited == listBuildBatch {
			return t.putRecord(barrier.SysLists, st)
		}
	}
	st.Done = true
	return t.putRecord(barrier.SysLists, st)
}

// buildRecordCounts counts the records of each counted kind of tid, in
// the transaction that begins listing its tokens: before it, nothing
// kept them.
func (t *txn) buildRecordCounts(tid string) error {
	for _, kind := range barrier.CountedKinds {
		n := int64(0)
		err := t.ScanKeys(barrier.Tenant(tid).Records(kind), func(barrier.Key, string) error {
			n++
			return nil
		})
		if err != nil {
			return err
		}
		if err := t.PutCount(barrier.Tenant(tid).Count(kind), n); err != nil {
			return err
		}
	}
	return nil
}
