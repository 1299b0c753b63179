package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
)

// The linker, what chains the queued audit lines beside the commits that
// wrote them, is auditlog.Linker (internal/auditlog/linker.go says how
// soon a line is linked); Open builds it and Close stops it.

// linkLease is the linker lease of v.
func (v *Vault) linkLease() *lease.Lease { return v.linker.Lease() }

// linkNow folds the store's appends and links every queued line, if this
// instance holds the linker lease or can take it (auditlog.Linker.LinkNow);
// otherwise it returns at once, the lines left to the holder. Returns the
// store's errors.
func (v *Vault) linkNow(ctx context.Context) error { return v.linker.LinkNow(ctx) }

// runChainer runs the linker under v.bg until Close.
func (v *Vault) runChainer() { v.linker.Run(v.bg) }

// AuditChainStats is the audit chain's backlog, for Stats: the lines
// committed and not linked yet, of every tenant, as the linker last
// measured them (every second, on every instance).
type AuditChainStats struct {
	// Unlinked is how many lines are queued and not linked, counted up
	// to 5,000 (a larger backlog reads as 5,000).
	Unlinked int
	// OldestAge is how long ago the oldest of them was written (on the
	// Vault's clock); 0 when there is none.
	OldestAge time.Duration
	// Linking is whether this instance holds the linker lease.
	Linking bool
}

// chainStats is the backlog as last measured.
func (v *Vault) chainStats() AuditChainStats {
	var s AuditChainStats
	var o int64
	s.Unlinked, o, s.Linking = v.linker.Backlog()
	if o > 0 && s.Unlinked > 0 {
		if now := barrier.UnixNanos(v.now()); now > o {
			s.OldestAge = time.Duration(now - o)
		}
	}
	return s
}
