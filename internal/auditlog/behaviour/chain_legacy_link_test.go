package auditlog_test

import (
	"context"
	"errors"
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

// TestLinesLinkedInTheirRecord: lines linked by an older version hold
// their link in their own record (and have no link record). A chain of
// such lines mixed with lines linked since verifies whole, exports every
// line with its link, and an index entry removed from under an old line
// is still found Missing, at its seq, with its id.
func TestLinesLinkedInTheirRecord(t *testing.T) {
	ctx := context.Background()
	v := openPlain(t, memory.New())
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Old"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	for i := range 6 {
		if _, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "app" + string(rune('a'+i)), Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := vaulttest.LinkNow(ctx, v); err != nil {
		t.Fatal(err)
	}
	// Every other line as an older version linked it.
	type line struct {
		seq    uint64
		suffix string
	}
	var lines []line
	err = testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		if err := tx.ScanKeys(barrier.Tenant(tid).ChainSeqs(), func(_ barrier.Key, rest string) error {
			e, ok := auditlog.ParseSeqEntry(rest)
			if !ok {
				t.Fatalf("index entry %q", rest)
			}
			lines = append(lines, line{e.Seq, e.Suffix})
			return nil
		}); err != nil {
			return err
		}
		for i, l := range lines {
			if i%2 == 1 {
				continue
			}
			var rec auditlog.LineRecord
			if _, err := tx.GetRecord(barrier.Tenant(tid).Logs().Key(l.suffix), &rec); err != nil {
				return err
			}
			if err := auditlog.WithLink(tx, tid, l.suffix, &rec); err != nil || rec.Link == nil {
				t.Fatalf("line %d: link %v, %v", l.seq, rec.Link, err)
			}
			if err := tx.PutRecord(barrier.Tenant(tid).Logs().Key(l.suffix), &rec); err != nil {
				return err
			}
			if err := tx.Delete(barrier.Tenant(tid).ChainLink(l.suffix)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 7 {
		t.Fatalf("a chain of %d lines", len(lines))
	}
	r, err := v.VerifyAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines != len(lines) {
		t.Errorf("%d lines verified, want %d", r.Lines, len(lines))
	}
	for _, p := range r.Problems {
		if p.Kind != auditchain.UnsignedTail {
			t.Errorf("problem in a mixed chain: %v", p)
		}
	}
	err = testseam.Of(v).Work.View(ctx, func(tx *unit.Tx) error {
		for _, l := range lines {
			nanos, id, _ := strings.Cut(l.suffix, "/")
			ev, state, err := auditlog.ExportEvent(tx, nanos+"/"+tid+"/"+id, errTenantGone)
			if err != nil {
				return err
			}
			if state != auditlog.ExportSend || ev.Seq != l.seq || ev.Hash == nil || ev.PrevHash == nil {
				t.Errorf("line %d exported as seq %d (state %v), hash %v", l.seq, ev.Seq, state, ev.Hash)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	old := lines[2]
	if err := testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		return tx.Delete(barrier.Tenant(tid).ChainSeq(old.seq, old.suffix))
	}); err != nil {
		t.Fatal(err)
	}
	if r, err = v.VerifyAuditChain(ctx, tid); err != nil {
		t.Fatal(err)
	}
	var got []auditchain.Problem
	for _, p := range r.Problems {
		if p.Kind != auditchain.UnsignedTail {
			got = append(got, p)
		}
	}
	if len(got) != 1 || got[0].Kind != auditchain.Missing || got[0].Seq != old.seq || got[0].LineID != unit.KeyID(old.suffix) {
		t.Errorf("the index entry of old line %d removed: %v", old.seq, got)
	}
}

// errTenantGone is what ExportEvent answers for a line of a deleted
// tenant; the test's tenant is never deleted.
var errTenantGone = errors.New("tenant gone")
