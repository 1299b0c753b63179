package tokenvault

import "github.com/tokenvault/tokenvault/internal/testseam"

// registerSeam shows v's internals to the tests outside this package
// (internal/testseam): they assert what no public method shows, such as
// a chain with every line linked, without a bridge in this package.
func (v *Vault) registerSeam() {
	testseam.Register(v, &testseam.Internals{
		Work:            v.work,
		Instance:        v.instance,
		Now:             v.now,
		NextID:          v.ids.Next,
		Linker:          v.linker,
		LinkLease:       v.linkLease,
		Indexer:         v.indexer,
		FoldAppends:     v.foldAppends,
		FoldCounts:      v.foldCounts,
		Events:          v.events,
		LimiterSizes:    v.limiterSizes,
		ResizeAuthCache: v.auth.Resize,
		AuthCacheLen:    v.auth.Len,
	})
}
