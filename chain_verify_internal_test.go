package tokenvault

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestVerifyHeadHash: a head rewritten, with the vault's keys, to a hash
// that is not its line's is a broken link at the head's sequence number.
func TestVerifyHeadHash(t *testing.T) {
	ctx := context.Background()
	v, err := Open(ctx, Options{Store: memory.New(), Keys: KeyOptions{MasterKey: make([]byte, 32)}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Head"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	var seq uint64
	err = v.update(ctx, func(tx *txn) error {
		var h chainHead
		if _, err := tx.getRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
			return err
		}
		seq = h.Seq
		h.Hash[0] ^= 1
		return tx.putRecord(barrier.Tenant(tid).ChainHead(), &h)
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.VerifyAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	var got []auditchain.Problem
	for _, p := range r.Problems {
		if p.Kind != auditchain.UnsignedTail {
			got = append(got, p)
		}
	}
	if seq == 0 || len(got) != 1 || got[0].Kind != auditchain.BrokenLink || got[0].Seq != seq {
		t.Errorf("head at %d with another hash: %v", seq, r.Problems)
	}
}
