package auditlog_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestAuditKeyOnSharedPostgres: two instances opening one new PostgreSQL
// store at once make one signing key between them; lines both write to
// one tenant are on one chain (the checkpoint after them covers every
// one); and a key rotated by one instance signs the other's next
// checkpoint, after the rotation's line, though the other had the old key
// cached.
func TestAuditKeyOnSharedPostgres(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ka, err := p.A.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := p.B.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ka, kb); diff != "" || len(ka) != 1 {
		t.Fatalf("the instances' keys (-a +b):\n%s\n%d keys, want 1", diff, len(ka))
	}
	boot, err := p.A.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Shared"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	base, err := p.B.SignAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	const each = 15
	var wg sync.WaitGroup
	for _, v := range []*tokenvault.Vault{p.A, p.B} {
		wg.Go(func() {
			for range each {
				if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	c, err := p.A.SignAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	if c.Seq != base.Seq+2*each || c.KeyID != ka[0].ID {
		t.Fatalf("checkpoint after both instances' lines = seq %d key %s; want seq %d key %s", c.Seq, c.KeyID, base.Seq+2*each, ka[0].ID)
	}
	if err := c.VerifySignature(ka[0].Key); err != nil {
		t.Fatal(err)
	}

	next, err := p.B.RotateAuditKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.A.GetTenant(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	c2, err := p.A.SignAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	if c2.KeyID != next.ID || c2.Seq != c.Seq+2 {
		t.Fatalf("instance a's checkpoint after b's rotation = key %s seq %d; want key %s seq %d", c2.KeyID, c2.Seq, next.ID, c.Seq+2)
	}
	if err := c2.VerifySignature(next.Key); err != nil {
		t.Fatal(err)
	}
	keys, err := p.A.AuditKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].RetiredAt == nil {
		t.Errorf("AuditKeys on a after the rotation = %+v, %v", keys, err)
	}
}
