// Package testseam lets the Vault's tests outside the root package reach
// the few parts of a Vault that no public method shows: the unit of work
// its features run on, its linker, indexer, count folder and caches.
//
// # Why it exists
//
// A behaviour test of a feature lives beside the feature (package
// <feature>_test) and sees the Vault only through its exported API. Some
// assertions need more: that every audit line is chained (the linker run
// at once rather than on its timer), what a record holds in the store,
// which rows only this instance writes. Open registers each Vault's
// Internals here and Close forgets them; internal/vaulttest builds the
// tests' helpers (LinkNow, WalkChain, PutDeliveryWebhook ...) on them.
//
// # What it does not do
//
// It grows no public API: being internal, only this module's packages can
// import it, and nothing outside tests does. It holds no logic of its own;
// each field is a method value of the Vault's own parts, so a test through
// the seam runs exactly the code a call would.
package testseam

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Internals are a Vault's parts the tests reach through the seam.
type Internals struct {
	// Work runs units of work on the Vault's barrier, as its methods do.
	Work *unit.Work
	// Instance is the Vault's instance id: the rows only it writes carry it.
	Instance string
	// Now is the Vault's clock; NextID makes a fresh id as of a time.
	Now    func() time.Time
	NextID func(time.Time) string
	// Linker chains the queued audit lines; LinkLease is its lease.
	Linker    *auditlog.Linker
	LinkLease func() *lease.Lease
	// Indexer indexes the reads' pending log entries.
	Indexer *auditlog.Indexer
	// FoldAppends folds the store's appends into it; FoldCounts does the
	// count folder's work at once and says how many rows it folded.
	FoldAppends func(context.Context) error
	FoldCounts  func(context.Context) (int, error)
	// Events is the webhooks' service (its Tap sees every queued event).
	Events *events.Service
	// LimiterSizes counts the buckets of each rate limit.
	LimiterSizes func() map[string]int
	// ResizeAuthCache bounds the authentication cache; AuthCacheLen
	// counts its entries.
	ResizeAuthCache func(n int)
	AuthCacheLen    func() int
}

// vaults maps each open *tokenvault.Vault to its Internals.
var vaults sync.Map

// Register records v's internals; Open calls it.
func Register(v any, in *Internals) { vaults.Store(v, in) }

// Forget drops v's internals; Close calls it.
func Forget(v any) { vaults.Delete(v) }

// Of returns v's internals. It panics for a Vault not open: a test's
// mistake, never a state a caller can reach.
func Of(v any) *Internals {
	in, ok := vaults.Load(v)
	if !ok {
		panic(fmt.Sprintf("testseam: %T %p is not an open Vault", v, v))
	}
	return in.(*Internals)
}
