package tokenvault

import (
	"strconv"
	"strings"
	"time"
)

// DefaultMaxPendingSessions is Options.MaxPendingSessionsPerApplication's
// zero value: the live sessions one public application may have waiting
// for authorization.
const DefaultMaxPendingSessions = 1000

// Unauthorized sessions are indexed per application by expiry, so that
// creating one can count the live ones of its application without reading
// a record (the store is shared by every instance, so this cap, unlike the
// rate limits, holds across instances):
//
//	tenant/<tid>/idx/pending-session/<app id>/<expiry nanos>/<session id>
func pendingSessionKey(tid, appID string, expires time.Time, id string) storeKey {
	return indexPrefix(tid, "pending-session").key(appID + "/" + timeKey(expires) + "/" + id)
}

// checkPendingSessions refuses (RateLimited) a new session of public
// application appID when it already has the most live unauthorized ones;
// RetryAfter is when the first of them expires.
func (t *txn) checkPendingSessions(tid, appID string) error {
	limit := t.v.maxPendingSessions
	if limit <= 0 {
		return nil
	}
	prefix := indexPrefix(tid, "pending-session").sub(appID + "/")
	// Entries expiring at or before now are expired: start past them.
	after := timeKey(t.now) + "/~"
	count, first := 0, ""
	err := t.scan(prefix, after, limit, func(_ storeKey, rest string) error {
		if count == 0 {
			first = rest
		}
		count++
		return nil
	})
	if err != nil {
		return err
	}
	if count < limit {
		return nil
	}
	wait := time.Second
	if nanos, _, ok := strings.Cut(first, "/"); ok {
		if n, err := strconv.ParseUint(nanos, 16, 64); err == nil {
			wait = time.Unix(0, int64(n)).Sub(t.now)
		}
	}
	return errRateLimited("creating sessions with this application: too many are waiting for authorization", wait)
}
