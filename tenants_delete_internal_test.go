package tokenvault

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestDeletionStartsOverOnAStraggler: a key written under the tenant after
// the tenant phase (a call that authenticated just before the mark) sends
// the deletion back to that phase instead of being left behind.
func TestDeletionStartsOverOnAStraggler(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	s := memory.New()
	v, err := Open(ctx, Options{Store: s, Keys: KeyOptions{MasterKey: key}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Doomed"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	if err := v.markDeleting(ctx, tid); err != nil {
		t.Fatal(err)
	}
	phase := func() string {
		var st tenants.DeletionState
		s.View(ctx, func(tx store.Tx) error {
			raw, _ := tx.Get([]byte(barrier.Tenant(tid).Deleting().String()))
			return st.DecodeRecord(barrier.Tenant(tid).Deleting(), raw)
		})
		return st.Phase
	}
	for phase() != tenants.PhaseFinish {
		if done, err := v.deleteOnce(ctx, tid); err != nil || done {
			t.Fatalf("deleteOnce = %v, %v before the finish phase", done, err)
		}
	}
	straggler := barrier.Tenant(tid).Record(EntityTenantMember, "late")
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.Put([]byte(straggler.String()), []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	if done, err := v.deleteOnce(ctx, tid); err != nil || done || phase() != tenants.PhaseTenant {
		t.Fatalf("the finish with a straggler = %v, %v, phase %q; want the tenant phase again", done, err, phase())
	}
	if err := v.finishDeletion(ctx, tid); err != nil {
		t.Fatal(err)
	}
	s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if strings.Contains(string(k), tid) && string(k) != barrier.FinalCheckpoint(tid).String() {
				t.Errorf("key %s left", k)
			}
			return nil
		})
	})
}
