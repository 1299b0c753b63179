package auditlog_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestVerifyHeadHash: a head rewritten, with the vault's keys, to a hash
// that is not its line's is a broken link at the head's sequence number.
func TestVerifyHeadHash(t *testing.T) {
	ctx := context.Background()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: make([]byte, 32)}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Head"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	if err := vaulttest.LinkNow(ctx, v); err != nil {
		t.Fatal(err)
	}
	var seq uint64
	err = testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		var h auditlog.Head
		if _, err := tx.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
			return err
		}
		seq = h.Seq
		h.Hash[0] ^= 1
		return tx.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
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

// TestVerifyInsertedWithKeys: lines written into the log with the vault's
// keys (so they open), one a copy of a chained line with its link, one
// with no link and not queued, are Inserted at the seq after the chained
// line they follow in the log; the chain itself still verifies.
func TestVerifyInsertedWithKeys(t *testing.T) {
	ctx := context.Background()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: make([]byte, 32)}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Insert"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	if err := vaulttest.LogLines(ctx, v, tid, 10, 1); err != nil {
		t.Fatal(err)
	}
	// Line 5, and the key suffixes of two copies right after it.
	var at uint64 = 5
	var ids []string
	err = testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		var suffix string
		if err := tx.Scan(barrier.Tenant(tid).ChainSeqs(), barrier.SeqKey(at), 1, func(_ barrier.Key, rest string) error {
			_, suffix, _ = strings.Cut(rest, "/")
			return nil
		}); err != nil {
			return err
		}
		var rec auditlog.LineRecord
		if _, err := tx.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec); err != nil {
			return err
		}
		if err := tx.PutRecord(barrier.Tenant(tid).Logs().Key(suffix+"~1"), &rec); err != nil {
			return err
		}
		rec.Link = nil
		ids = []string{unit.KeyID(suffix) + "~1", unit.KeyID(suffix) + "~2"}
		return tx.PutRecord(barrier.Tenant(tid).Logs().Key(suffix+"~2"), &rec)
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
	if len(got) != 2 || got[0].Kind != auditchain.Inserted || got[1].Kind != auditchain.Inserted ||
		got[0].Seq != at+1 || got[1].Seq != at+1 || !slices.Contains(ids, got[0].LineID) || !slices.Contains(ids, got[1].LineID) {
		t.Errorf("two lines inserted after line %d (%v): %v", at, ids, r.Problems)
	}
}
