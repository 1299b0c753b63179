package auditlog_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestChainTwoVaultsOneTenant, for each store (memory, bbolt, and
// PostgreSQL when TOKENVAULT_TEST_POSTGRES_DSN is set): two Vaults on one
// store create and read tokens of one tenant from several goroutines
// each. Every line ends up on the tenant's chain once, with no fork (seqs
// 1..n, each linked to the one before, the head at the last), and
// VerifyAuditChain through either Vault reports no problem but the
// unsigned tail, and no line left unlinked.
func TestChainTwoVaultsOneTenant(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sk.Open(t)
			t.Cleanup(func() { s.Close() })
			key := vaulttest.NewMasterKey()
			var vaults []*tokenvault.Vault
			for range 2 {
				v, err := tokenvault.Open(ctx, tokenvault.Options{
					Store: s, Keys: tokenvault.KeyOptions{MasterKey: key},
					Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
					Retention: tokenvault.RetentionOptions{SweepInterval: -1},
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { v.Close() })
				vaults = append(vaults, v)
			}
			boot, err := vaults[0].CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Shared"})
			if err != nil {
				t.Fatal(err)
			}
			app, err := vaults[0].CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "rw", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
			if err != nil {
				t.Fatal(err)
			}
			ids, _ := chainLoad(t, vaults, app.Key, 4, 10)
			if len(ids) != 2*4*10 {
				t.Fatalf("%d tokens created, want %d", len(ids), 2*4*10)
			}
			w := checkChainOf(t, vaults[1], boot.Tenant.ID, ids)
			for i, v := range vaults {
				r, err := v.VerifyAuditChain(ctx, boot.Tenant.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range r.Problems {
					if p.Kind != auditchain.UnsignedTail {
						t.Errorf("vault %d: %v", i, p)
					}
				}
				if r.Unlinked != 0 || r.Lines != w.Lines || r.LastSeq != uint64(w.Lines) {
					t.Errorf("vault %d: %d lines verified (to seq %d), %d unlinked; want %d and none", i, r.Lines, r.LastSeq, r.Unlinked, w.Lines)
				}
			}
		})
	}
}

// TestChainBacklogStats: Stats reports the lines committed and not yet
// linked, and how old the oldest is, while another instance holds the
// linker lease without linking (a process stopped or dead); once that
// lease expires this Vault's linker takes it, links them all, and Stats
// reports none.
func TestChainBacklogStats(t *testing.T) {
	ctx := context.Background()
	e := vaulttest.NewEnv(t)
	if err := vaulttest.HoldLinkerLease(ctx, e.V, e.Clock.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	boot := e.Tenant(t, "Backlog")
	e.Clock.Advance(3 * time.Second) // less than the other instance's lease
	var st tokenvault.AuditChainStats
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st = e.V.Stats().AuditChain; st.Unlinked > 0 {
			break
		}
	}
	if st.Unlinked == 0 || st.OldestAge < 3*time.Second || st.Linking {
		t.Fatalf("Stats().AuditChain = %+v; want lines unlinked for 3 s or more, not linking", st)
	}
	e.Clock.Advance(time.Minute) // the other instance's lease expires
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st = e.V.Stats().AuditChain; st.Unlinked == 0 && st.Linking {
			break
		}
	}
	if st.Unlinked != 0 || !st.Linking {
		t.Fatalf("after the takeover Stats().AuditChain = %+v; want nothing unlinked, linking", st)
	}
	r, err := e.V.VerifyAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines == 0 || r.Unlinked != 0 {
		t.Fatalf("verify after the takeover: %d lines, %d unlinked; want them all linked", r.Lines, r.Unlinked)
	}
}
