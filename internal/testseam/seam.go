package testseam

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"

	"github.com/tokenvault/tokenvault/internal/tokens/listing"
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

	// The audit log's parts its behaviour tests drive at once, rather
	// than wait for a timer, or look into.
	//
	// Exporter delivers the export queues: a test runs a pass (Pass) or
	// queues a line it wrote itself (Queue).
	Exporter *auditlog.Exporter
	// Checkpoints signs the chains' heads: a test runs the timed pass
	// (SignOld) with a clock it moves.
	Checkpoints *auditlog.Checkpointer
	// AuditSigner is the checkpoint signing key in use, so that a test can
	// look for its private key where it must never be.
	AuditSigner func() *auditlog.Signer

	// What the record tests (internal/records/behaviour) reach.
	//
	// Tokens is the token feature: a test reads a token's record as the
	// API's reads load it (Tokens.Load), without the read being logged.
	Tokens *tokens.Service
	// MarkDeleting and DeleteOnce are the first transaction of a tenant's
	// deletion and one batch of the rest: a test leaves a tenant halfway
	// deleted, as only a crash or the sweeper would, to see the keys such
	// a tenant leaves in the store.
	MarkDeleting func(ctx context.Context, tid string) error
	DeleteOnce   func(ctx context.Context, tid string) (done bool, err error)
	// ApplicationOf and TenantOf are the API's views of an application's
	// and a tenant's record (a *tokenvault.Application and a
	// tokenvault.Tenant), and TenantRecordOf the record of a
	// *tokenvault.Tenant: the record tests hold the API types' fields to
	// the records' (a field added to one and not carried by the other),
	// which no public method shows apart from what the store holds.
	ApplicationOf  func(*access.ApplicationRecord) any
	TenantOf       func(*tenants.Record) any
	TenantRecordOf func(tenant any) *tenants.Record

	// Lists are the Vault's token lists: a test of the build for a store
	// written before them runs one batch of it (BuildOnce) after making
	// them forget what they knew of the registries (Forget).
	Lists *listing.Lists
	// ExpiryKinds are the sweeper's handlers, by the kind of schedule
	// entry, as the Vault gathered them from its features: a test holds
	// every kind a feature schedules to a handler and a metric.
	ExpiryKinds map[string]unit.ExpiryKind
}

// internals is set by the root package's init: it returns a Vault's
// internals, or false for a value that is not a *tokenvault.Vault.
var internals func(v any) (*Internals, bool)

// Expose sets how Of finds a Vault's internals; the root package calls it
// once, from init. It holds no Vault: each Of builds the Internals anew
// from the Vault it is given, before or after Close.
func Expose(fn func(v any) (*Internals, bool)) { internals = fn }

// Of returns v's internals. It panics when v is not a *tokenvault.Vault:
// a test's mistake, never a state a caller can reach.
func Of(v any) *Internals {
	if internals != nil {
		if in, ok := internals(v); ok {
			return in
		}
	}
	panic(fmt.Sprintf("testseam: %T is not a *tokenvault.Vault", v))
}
