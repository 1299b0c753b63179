package auditlog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// wantPrunedChain walks tenant tid's chain and fails t unless it is whole
// from firstSeq (0: any start after 1) to its head, every line on it,
// starting from a checkpoint at firstSeq-1 whose hash is the first line's
// prev and whose signature verifies with the key the vault publishes,
// with no checkpoint left below it. It returns the walk.
func wantPrunedChain(t *testing.T, v *tokenvault.Vault, tid string, firstSeq uint64) *vaulttest.ChainWalk {
	t.Helper()
	ctx := context.Background()
	w, err := vaulttest.WalkChain(ctx, v, tid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Problems {
		t.Error(p)
	}
	if w.Chained != w.Lines || w.LastSeq != w.Head || w.FirstSeq != w.HeadFirstSeq {
		t.Errorf("chain %d..%d (head %d from %d), %d of %d lines on it", w.FirstSeq, w.LastSeq, w.Head, w.HeadFirstSeq, w.Chained, w.Lines)
	}
	if firstSeq == 0 && w.FirstSeq <= 1 || firstSeq != 0 && w.FirstSeq != firstSeq {
		t.Fatalf("the chain starts at %d, want %d (0: pruned)", w.FirstSeq, firstSeq)
	}
	anchor, all, err := vaulttest.ChainAnchor(ctx, v, tid)
	if err != nil {
		t.Fatal(err)
	}
	if anchor == nil {
		t.Fatalf("no checkpoint at %d, before the first line kept", w.FirstSeq-1)
	}
	if anchor.Hash != w.Anchor || anchor.TenantID != tid {
		t.Errorf("anchor checkpoint %+v, the first line's prev is %s", anchor, w.Anchor)
	}
	for _, c := range all {
		if c.Seq < anchor.Seq {
			t.Errorf("checkpoint at %d left below the anchor at %d", c.Seq, anchor.Seq)
		}
	}
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verified := false
	for _, k := range keys {
		if k.ID == anchor.KeyID {
			if err := anchor.VerifySignature(k.Key); err != nil {
				t.Errorf("the anchor checkpoint does not verify with published key %s: %v", k.ID, err)
			}
			verified = true
		}
	}
	if !verified {
		t.Errorf("the anchor's key %s is not published (%d keys)", anchor.KeyID, len(keys))
	}
	var bad auditchain.Checkpoint = *anchor
	bad.Hash[0] ^= 1
	for _, k := range keys {
		if k.ID == anchor.KeyID && bad.VerifySignature(k.Key) == nil {
			t.Error("an altered anchor verifies")
		}
	}
	// The vault's own verifier agrees: nothing wrong but, maybe, lines
	// signed by no checkpoint yet.
	rep, err := v.VerifyAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Kind != auditchain.UnsignedTail {
			t.Errorf("VerifyAuditChain: %v", p)
		}
	}
	if rep.FirstSeq != 0 && rep.FirstSeq != w.FirstSeq {
		t.Errorf("VerifyAuditChain starts at %d, the walk at %d", rep.FirstSeq, w.FirstSeq)
	}
	return w
}

// TestLogRetentionPrunesAPrefixOfTheChain: retention removes the lines
// older than it as a prefix of the chain, over several transactions; what
// is left is whole from the head's new first_seq, its first line's prev is
// the hash of a checkpoint signed at first_seq-1 (verified with the
// published key), and no older checkpoint is left.
func TestLogRetentionPrunesAPrefixOfTheChain(t *testing.T) {
	const retention = 400 * 24 * time.Hour
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) {
				o.Retention.Logs = retention
				o.AuditChain.CheckpointEvery = 50 // checkpoints below the new start, to be removed
			})
			ctx := context.Background()
			app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
			for range 230 {
				if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "old"}); err != nil {
					t.Fatal(err)
				}
			}
			old := vaulttest.AllLogs(t, e.V, e.Mgmt)
			e.Clock.Advance(200 * 24 * time.Hour)
			tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "new"})
			if err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(201 * 24 * time.Hour)
			n, err := e.V.Sweep(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(old) {
				t.Errorf("Sweep = %d, want the %d lines older than the retention", n, len(old))
			}
			w := wantPrunedChain(t, e.V, e.Boot.Tenant.ID, uint64(len(old))+1)
			if w.Lines != 1 || w.ByEntity[tok.ID+" "+tokenvault.OpCreate] != 1 {
				t.Errorf("left: %d lines %v, want the creation of %s", w.Lines, w.ByEntity, tok.ID)
			}
			// The chain goes on from there.
			if _, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "newer"}); err != nil {
				t.Fatal(err)
			}
			wantPrunedChain(t, e.V, e.Boot.Tenant.ID, uint64(len(old))+1)
		})
	}
}

// TestLogRetentionKeepsTheChainOfUnexportedLines: the chain is pruned up
// to the first line an audit sink has yet to receive: with the sink down
// nothing goes and the chain still starts at 1; once the sink took the
// first lines and went down again, those go and the chain starts at the
// first line it has not received, anchored by a signed checkpoint.
func TestLogRetentionKeepsTheChainOfUnexportedLines(t *testing.T) {
	clk := vaulttest.NewClock()
	sink := &vaulttest.CaptureSink{SinkName: "file"}
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:       memory.New(),
		Now:         clk.Now,
		Keys:        tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1, Logs: time.Hour},
		AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{sink}, Interval: 50 * time.Millisecond, Backoff: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	vaulttest.WaitExported(t, v) // the first three lines reached the sink
	sink.Set(true, false)
	for range 5 {
		if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(2 * time.Hour)
	if _, err := v.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	w := wantPrunedChain(t, v, tid, 0)
	if w.Lines != 5 {
		t.Errorf("%d lines left, want the 5 the sink has not received", w.Lines)
	}
	sink.Set(false, false)
	vaulttest.WaitExported(t, v)
	if _, err := v.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if w := wantPrunedChain(t, v, tid, 0); w.Lines != 0 || w.FirstSeq != w.Head+1 {
		t.Errorf("after export: chain %d..%d, %d lines, want every line pruned", w.FirstSeq, w.Head, w.Lines)
	}

	// With nothing exported yet, nothing goes.
	sink.Set(true, false)
	boot2, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.CreateApplication(ctx, boot2.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour)
	if _, err := v.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	w2, err := vaulttest.WalkChain(ctx, v, boot2.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(w2.Problems) > 0 || w2.FirstSeq != 1 || w2.Lines == 0 || w2.Chained != w2.Lines {
		t.Errorf("with the sink down: chain from %d, %d of %d lines, problems %v; want all kept from 1", w2.FirstSeq, w2.Chained, w2.Lines, w2.Problems)
	}
}

// TestLogRetentionInterruptedKeepsTheChainWhole: pruning in batches of
// transactions, with a write failing at points across them, leaves after
// each failed sweep a chain that is whole from a signed checkpoint (or
// from 1); the next sweep goes on from there, and the last leaves the
// lines younger than the retention only.
func TestLogRetentionInterruptedKeepsTheChainWhole(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs, func(o *tokenvault.Options) { o.Retention.Logs = time.Hour })
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	for range 350 {
		if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "old"}); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(2 * time.Hour)
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "new"})
	if err != nil {
		t.Fatal(err)
	}
	tid := e.Boot.Tenant.ID
	interruptedPruned := false
	for n := 37; ; n += 311 {
		fs.FailAfter(n)
		_, err := e.V.Sweep(ctx)
		fs.FailAfter(-1)
		w, werr := vaulttest.WalkChain(ctx, e.V, tid)
		if werr != nil {
			t.Fatal(werr)
		}
		if w.FirstSeq > 1 {
			wantPrunedChain(t, e.V, tid, 0)
		} else if len(w.Problems) > 0 {
			t.Fatalf("after a sweep failing after %d writes (%v): %v", n, err, w.Problems)
		}
		if err == nil {
			if w.Lines != 1 || w.ByEntity[tok.ID+" "+tokenvault.OpCreate] != 1 {
				t.Errorf("after the sweep: %d lines %v, want the creation of %s only", w.Lines, w.ByEntity, tok.ID)
			}
			break
		}
		interruptedPruned = interruptedPruned || w.FirstSeq > 1
		if n > 20000 {
			t.Fatalf("sweeps still failing after %d writes: %v", n, err)
		}
	}
	if !interruptedPruned {
		t.Error("no failed sweep had pruned a batch before its failure: the interruption went untested")
	}
}

// TestLogRetentionWhileWriting: a sweep pruning the chain's prefix while
// other callers extend the chain (both move its head: on PostgreSQL they
// conflict on it and one runs again) leaves it whole from a signed anchor,
// with every line written meanwhile on it.
func TestLogRetentionWhileWriting(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) { o.Retention.Logs = time.Hour })
			ctx := context.Background()
			app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
			for range 250 {
				if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "old"}); err != nil {
					t.Fatal(err)
				}
			}
			e.Clock.Advance(2 * time.Hour)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var ids []string
			for g := range 4 {
				wg.Go(func() {
					for i := range 15 {
						tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("%d-%d", g, i)})
						if err != nil {
							t.Error(err)
							return
						}
						if _, err := e.V.GetToken(ctx, app.Key, tok.ID); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						ids = append(ids, tok.ID)
						mu.Unlock()
					}
				})
			}
			if _, err := e.V.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			w := wantPrunedChain(t, e.V, e.Boot.Tenant.ID, 0)
			for _, id := range ids {
				if c, r := w.ByEntity[id+" "+tokenvault.OpCreate], w.ByEntity[id+" "+tokenvault.OpRead]; c != 1 || r != 1 {
					t.Errorf("token %s written during the sweep: %d creation and %d read lines on the chain", id, c, r)
				}
			}
		})
	}
}
