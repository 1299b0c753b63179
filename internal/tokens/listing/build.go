package listing

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// BuildBatch is how many keys (token records, or entries of the lists
// before shapes to remove) one transaction of the build visits.
const BuildBatch = 1000

// Build gives a store written by an earlier version its token lists by
// shape, once: Open calls it before it serves anything, so no list is
// served from a half-built index. It visits every tenant, BuildBatch
// keys a transaction of w: it removes the lists and counts kept before
// shapes (an entry in the index of the token's type and of each of its
// containers and their ancestors, a count each:
// barrier.TenantKeys.LegacyTokenLists), then lists each token record in
// its shape and counts it, recording in the same transaction how far it
// got (at barrier.SysShapeLists), so a build cut short goes on where it
// stopped and counts each token once. A store written before any list
// existed (no build at barrier.SysLists) also gets the counts of its
// other counted records (barrier.CountedKinds). A store that is new, or
// already built, costs one read. Tenants being deleted are passed by:
// their records go. It tells log when it builds, and returns the store's
// errors.
//
// Every Vault sharing a store (PostgreSQL) must be of a version that keeps
// the lists by shape: an older one would write entries they do not read.
// Vaults opening together build together, each transaction reading the
// progress the last one recorded.
func (l *Lists) Build(ctx context.Context, w *unit.Work, log *slog.Logger) error {
	var st tokens.ListBuild
	tenants := false
	err := w.View(ctx, func(t *unit.Tx) error {
		if _, err := t.GetRecord(barrier.SysShapeLists, &st); err != nil || st.Done {
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
		log.Info("tokenvault: building the token lists of a store written by an earlier version")
	}
	for err == nil && !st.Done {
		err = w.Update(ctx, func(t *unit.Tx) error {
			st = tokens.ListBuild{}
			_, err := t.GetRecord(barrier.SysShapeLists, &st)
			if err != nil || st.Done {
				return err
			}
			var before tokens.ListBuild
			if _, err := t.GetRecord(barrier.SysLists, &before); err != nil {
				return err
			}
			return l.BuildOnce(t, &st, &before)
		})
		batches++
	}
	if err == nil && tenants {
		log.Info("tokenvault: built the token lists", "transactions", batches,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	return err
}

// BuildOnce is one transaction of Build: it visits up to BuildBatch keys
// after st and records its progress in st and the store. before is the
// progress of the build of the lists before shapes, which tells the
// tenants whose other records were counted then.
func (l *Lists) BuildOnce(t *unit.Tx, st, before *tokens.ListBuild) error {
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
		deleting, err := l.TenantDeleting(t, tid)
		if err != nil {
			return err
		}
		if deleting {
			continue
		}
		if tid != st.Tenant {
			st.Tenant, st.After = tid, ""
			if !before.Done && (before.Tenant == "" || tid > before.Tenant) {
				if err := buildRecordCounts(t, tid); err != nil {
					return err
				}
			}
		}
		n, err := removeLegacyLists(t, tid, BuildBatch-visited)
		if err != nil {
			return err
		}
		visited += n
		if visited == BuildBatch {
			return t.PutRecord(barrier.SysShapeLists, st)
		}
		prefix := barrier.Tenant(tid).Records(tokens.Kind)
		kvs, err := t.ScanValuesAfter(prefix, strings.TrimPrefix(st.After, prefix.String()), BuildBatch-visited)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			visited++
			st.After = kv.Key.String()
			var rec tokens.Record
			if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
				return err
			}
			if err := l.List(t, &rec); err != nil {
				return err
			}
		}
		if visited == BuildBatch {
			return t.PutRecord(barrier.SysShapeLists, st)
		}
	}
	st.Done = true
	return t.PutRecord(barrier.SysShapeLists, st)
}

// removeLegacyLists removes up to limit keys of tid's lists and counts
// from before shapes, and returns how many it removed: fewer than limit
// once none is left.
func removeLegacyLists(t *unit.Tx, tid string, limit int) (int, error) {
	n := 0
	for _, p := range barrier.Tenant(tid).LegacyTokenLists() {
		var keys []barrier.Key
		err := t.Scan(p, "", limit-n, func(k barrier.Key, _ string) error {
			keys = append(keys, k)
			return nil
		})
		if err != nil {
			return n, err
		}
		for _, k := range keys {
			if err := t.Delete(k); err != nil {
				return n, err
			}
		}
		if n += len(keys); n == limit {
			break
		}
	}
	return n, nil
}

// buildRecordCounts counts the records of each counted kind of tid, in
// the transaction that begins listing its tokens: before it, nothing
// kept them.
func buildRecordCounts(t *unit.Tx, tid string) error {
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
