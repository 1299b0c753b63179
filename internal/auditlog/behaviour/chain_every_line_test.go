package auditlog_test

import (
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestEveryLineChained writes lines in commits and, on bbolt, as appended
// reads from many goroutines at once, and then walks the chain
// (vaulttest.WalkChain): every line of the tenant is on it once, in
// sequence from 1, each linked to the one before and hashed as auditchain
// says, the head at its end, and no line is left queued.
func TestEveryLineChained(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) tokenvault.Options
	}{
		{"memory", func(*testing.T) tokenvault.Options { return tokenvault.Options{Store: memory.New()} }},
		{"bolt", func(t *testing.T) tokenvault.Options {
			return tokenvault.Options{Path: filepath.Join(t.TempDir(), "v.db")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts(t)
			opts.Keys.MasterKey = make([]byte, 32)
			opts.Retention.SweepInterval = -1
			v, err := tokenvault.Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Chained"})
			if err != nil {
				t.Fatal(err)
			}
			app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "rw", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 20 {
						tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "d" + strconv.Itoa(g*100+i)})
						if err != nil {
							t.Error(err)
							return
						}
						for range 2 {
							if _, err := v.GetToken(ctx, app.Key, tok.ID); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			in := testseam.Of(v)
			if in.Work.Barrier().Appends() && vaulttest.AppendedCalls(v) == 0 {
				t.Error("no read was appended: the linking of appended lines went untested")
			}
			w, err := vaulttest.WalkChain(ctx, v, boot.Tenant.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range w.Problems {
				t.Error(p)
			}
			if w.FirstSeq != 1 || w.LastSeq != uint64(w.Chained) || w.Head != w.LastSeq {
				t.Errorf("chain from seq %d to %d (%d lines), head at %d; want 1 to the head", w.FirstSeq, w.LastSeq, w.Chained, w.Head)
			}
			if want := 2 + 8*20*3; w.Lines < want || w.Lines != w.Chained || w.PreChain != 0 {
				t.Errorf("%d lines, %d chained, %d before the chain, want at least %d, all chained", w.Lines, w.Chained, w.PreChain, want)
			}
			// No tenant's line is left for the linker.
			queued := 0
			err = in.Work.View(ctx, func(tx *unit.Tx) error {
				return tx.ScanKeys(barrier.ChainQueue, func(barrier.Key, string) error { queued++; return nil })
			})
			if err != nil || queued != 0 {
				t.Errorf("%d lines still queued for the chain (%v)", queued, err)
			}
		})
	}
}

// TestChainPassSkipsALineThatDoesNotOpen: a queued line altered in the
// store (its sealed bytes changed before the linker pass reached it) is
// left off the chain, where a verification reports it, instead of
// failing every linker pass, and what waits for them, for good.
func TestChainPassSkipsALineThatDoesNotOpen(t *testing.T) {
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: filepath.Join(t.TempDir(), "v.db"), Keys: tokenvault.KeyOptions{MasterKey: make([]byte, 32)},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Altered"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	id := "01b8e094-9888-7000-8000-00000000abcd"
	in := testseam.Of(v)
	suffix := barrier.TimeKey(in.Now()) + "/" + id
	err = in.Work.Update(ctx, func(tx *unit.Tx) error {
		// The bytes of another record: they do not open at this key.
		raw, _, err := tx.GetPlain(barrier.Tenant(tid).ChainHead())
		if err != nil {
			return err
		}
		if err := tx.PutPlain(barrier.Tenant(tid).Logs().Key(suffix), raw); err != nil {
			return err
		}
		return tx.PutIndex(barrier.Tenant(tid).ChainQueueEntry(suffix))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.LinkNow(ctx, v); err != nil {
		t.Fatalf("the linker pass failed on a line that does not open: %v", err)
	}
	r, err := v.VerifyAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range r.Problems {
		found = found || p.LineID == id
	}
	if !found {
		t.Errorf("the altered line is not reported: %v", r.Problems)
	}
}
