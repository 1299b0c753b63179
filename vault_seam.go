package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/counts"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/testseam"
)

// init shows a Vault's internals to the tests outside this package
// (internal/testseam): they assert what no public method shows, such as
// a chain with every line linked, without a bridge in this package. It
// keeps no Vault: the seam reads the one a test hands it.
func init() {
	testseam.Expose(func(x any) (*testseam.Internals, bool) {
		v, ok := x.(*Vault)
		if !ok {
			return nil, false
		}
		return v.internals(), true
	})
}

// internals are v's parts as the seam shows them.
func (v *Vault) internals() *testseam.Internals {
	return &testseam.Internals{
		Work:            v.work,
		Instance:        v.instance,
		Now:             v.now,
		NextID:          v.ids.Next,
		Linker:          v.linker,
		LinkLease:       v.linkLease,
		Indexer:         v.indexer,
		FoldAppends:     v.foldAppends,
		FoldCounts:      func(ctx context.Context) (int, error) { return counts.FoldAll(ctx, v.barrier) },
		Events:          v.events,
		LimiterSizes:    v.limiterSizes,
		ResizeAuthCache: v.auth.Resize,
		AuthCacheLen:    v.auth.Len,

		Exporter:    v.exporter,
		Checkpoints: v.checkpoints,
		AuditSigner: v.auditSigner.Load,

		// The record tests' (internal/records/behaviour).
		Tokens:         v.tokens,
		MarkDeleting:   v.markDeleting,
		DeleteOnce:     v.deleteOnce,
		ApplicationOf:  func(r *access.ApplicationRecord) any { return applicationOf(r) },
		TenantOf:       func(r *tenants.Record) any { return tenantOf(r) },
		TenantRecordOf: func(t any) *tenants.Record { return tenantRecordOf(t.(*Tenant)) },

		Lists:       v.lists,
		ExpiryKinds: v.expiryKinds,
	}
}
