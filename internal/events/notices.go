package events

import (
	"sync"
	"time"
)

// Bounds on the mails that tell a notify_email its webhook was disabled.
// A tenant controls both ends (its receiver answers 410, and PUT enables
// the webhook again), so without a bound it could have the Vault mail any
// address it names as often as it likes. Per instance (the bounds are in
// memory): at most one notice per webhook per noticeWindow, and
// noticesPerTenant per tenant, whichever comes first. A suppressed
// notice is logged; the webhook's status and disabled_reason still say
// what happened.
const (
	noticeWindow     = time.Hour
	noticesPerTenant = 5
)

// noticeLimiter remembers the notices sent in the last noticeWindow.
type noticeLimiter struct {
	mu   sync.Mutex
	sent []sentNotice // oldest first
}

type sentNotice struct {
	tid, whid string
	at        time.Time
}

// allow reports whether a notice about webhook whid of tenant tid may go
// at now, and if so counts it.
func (l *noticeLimiter) allow(tid, whid string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.sent) && now.Sub(l.sent[i].at) >= noticeWindow {
		i++
	}
	l.sent = l.sent[i:]
	perTenant := 0
	for _, s := range l.sent {
		if s.tid != tid {
			continue
		}
		if s.whid == whid {
			return false
		}
		perTenant++
	}
	if perTenant >= noticesPerTenant {
		return false
	}
	l.sent = append(l.sent, sentNotice{tid, whid, now})
	return true
}
