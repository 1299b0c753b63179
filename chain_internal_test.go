package tokenvault

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestEveryLineChained writes lines in commits and, on bbolt, as appended
// reads from many goroutines at once, and then walks the chain: every line
// of the tenant is on it once, in sequence, each linked to the one before
// and hashed as auditchain says.
func TestEveryLineChained(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) Options
	}{
		{"memory", func(*testing.T) Options { return Options{Store: memory.New()} }},
		{"bolt", func(t *testing.T) Options { return Options{Path: filepath.Join(t.TempDir(), "v.db")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			opts := tc.opts(t)
			opts.Keys.MasterKey = make([]byte, 32)
			opts.Retention.SweepInterval = -1
			v, err := Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Chained"})
			if err != nil {
				t.Fatal(err)
			}
			app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{
				Name: "rw", Type: Private, Permissions: []string{PermTokenCreate, PermTokenRead}})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 20 {
						tok, err := v.CreateToken(ctx, app.Key, TokenRequest{Type: "token", Data: "d" + strconv.Itoa(g*100+i)})
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
			if v.barrier.Appends() && v.linker.AppendedCalls() == 0 {
				t.Error("no read was appended: the linking of appended lines went untested")
			}
			if err := v.linkNow(ctx); err != nil {
				t.Fatal(err)
			}
			tid := boot.Tenant.ID
			err = v.view(ctx, func(tx *txn) error {
				var prev auditchain.Hash
				var seq uint64
				onChain := map[string]bool{}
				err := tx.ScanKeys(barrier.Tenant(tid).ChainSeqs(), func(_ barrier.Key, rest string) error {
					seq++
					s, suffix, _ := strings.Cut(rest, "/")
					if s != barrier.SeqKey(seq) {
						t.Fatalf("index entry %q, want seq %d", rest, seq)
					}
					var rec auditlog.LineRecord
					if ok, err := tx.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec); err != nil || !ok {
						t.Fatalf("line %s of seq %d: %v %v", suffix, seq, ok, err)
					}
					if err := auditlog.WithLink(tx.Tx, tid, suffix, &rec); err != nil {
						t.Fatalf("line %s of seq %d: link: %v", suffix, seq, err)
					}
					if rec.Link == nil || rec.Link.Seq != seq || rec.Link.Prev != prev {
						t.Fatalf("line %s at seq %d has link %+v, want prev %s", suffix, seq, rec.Link, prev)
					}
					line := auditlog.ChainedLine(tid, unit.KeyID(suffix), &rec)
					if h := auditchain.LineHash(prev, seq, &line); h != rec.Link.Hash {
						t.Fatalf("line %s: hash %s, stored %s", suffix, h, rec.Link.Hash)
					}
					prev = rec.Link.Hash
					onChain[suffix] = true
					return nil
				})
				if err != nil {
					return err
				}
				lines := 0
				err = tx.ScanKeys(barrier.Tenant(tid).Logs(), func(_ barrier.Key, suffix string) error {
					lines++
					if !onChain[suffix] {
						t.Errorf("line %s is not on the chain", suffix)
					}
					return nil
				})
				if want := 2 + 8*20*3; lines < want || lines != len(onChain) {
					t.Errorf("%d lines, %d chained, want at least %d", lines, len(onChain), want)
				}
				var head auditlog.Head
				if _, err := tx.GetRecord(barrier.Tenant(tid).ChainHead(), &head); err != nil {
					return err
				}
				if head.Seq != seq || head.Hash != prev {
					t.Errorf("head at %d %s, chain ends at %d %s", head.Seq, head.Hash, seq, prev)
				}
				queued := 0
				err = tx.ScanKeys(barrier.ChainQueue, func(barrier.Key, string) error { queued++; return nil })
				if queued != 0 {
					t.Errorf("%d lines still queued for the chain", queued)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestChainPassSkipsALineThatDoesNotOpen: a queued line altered in the
// store (its sealed bytes changed before the linker pass reached it) is
// left off the chain, where a verification reports it, instead of
// failing every linker pass, and what waits for them, for good.
func TestChainPassSkipsALineThatDoesNotOpen(t *testing.T) {
	ctx := context.Background()
	v, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "v.db"), Keys: KeyOptions{MasterKey: make([]byte, 32)},
		Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Altered"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	id := "01b8e094-9888-7000-8000-00000000abcd"
	suffix := barrier.TimeKey(v.now()) + "/" + id
	err = v.update(ctx, func(tx *txn) error {
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
	if err := v.linkNow(ctx); err != nil {
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
