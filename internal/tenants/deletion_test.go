package tenants

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
	"github.com/tokenvault/tokenvault/store"
)

// seedTenant writes a tenant's keyring and registry entry, n member keys
// and an invitation with its link lookup and expiry entry.
func seedTenant(t *testing.T, w *worktest.Work, tid string, n int) {
	t.Helper()
	keys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	err = w.Update(context.Background(), func(tx *unit.Tx) error {
		tx.CreatedKeys(tid, keys)
		if err := tx.PutKeyring(barrier.Tenant(tid).Keyring(), keys); err != nil {
			return err
		}
		if err := tx.PutIndex(barrier.Tenant(tid).Registry()); err != nil {
			return err
		}
		for i := range n {
			if err := tx.PutIndex(barrier.Tenant(tid).Record(unit.EntityTenantMember, fmt.Sprintf("m%04d", i))); err != nil {
				return err
			}
		}
		return PutInvitation(tx, &InvitationRecord{ID: "i-" + tid, TenantID: tid, Email: "ada@example.com",
			Status: InvitationPending, ExpiresAt: tx.Now.Add(Lifetime), CreatedAt: tx.Now, TokenHash: []byte("hash-" + tid)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mark writes the deletion marker of tid and takes the tenant out of the
// registry with its keyring, as the root's first transaction does.
func mark(t *testing.T, w *worktest.Work, tid string) {
	t.Helper()
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		if err := tx.PutPlainRecord(barrier.Tenant(tid).Deleting(), &DeletionState{Phase: PhaseTenant}); err != nil {
			return err
		}
		for _, k := range []barrier.Key{barrier.Tenant(tid).Registry(), barrier.Tenant(tid).Keyring()} {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// phase is the phase of tid's deletion marker ("" when it is gone).
func phase(t *testing.T, w *worktest.Work, tid string) string {
	t.Helper()
	var st DeletionState
	if err := w.View(context.Background(), func(tx *unit.Tx) error {
		_, err := tx.GetPlainRecord(barrier.Tenant(tid).Deleting(), &st)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return st.Phase
}

// pass runs one DeletePass of tid.
func pass(t *testing.T, w *worktest.Work, tid string) bool {
	t.Helper()
	var done bool
	if err := w.Update(context.Background(), func(tx *unit.Tx) (err error) {
		done, err = DeletePass(tx, tid)
		return err
	}); err != nil {
		t.Fatalf("DeletePass(%s): %v", tid, err)
	}
	return done
}

// keysNaming lists the store's keys that hold s.
func keysNaming(t *testing.T, s store.Store, sub string) []string {
	t.Helper()
	var out []string
	s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if strings.Contains(string(k), sub) {
				out = append(out, string(k))
			}
			return nil
		})
	})
	return out
}

// TestDeletePassRemovesOnlyTheTenant: the passes walk the phases in order,
// DeleteBatch keys at most each, and leave nothing of the tenant (its
// invitation lookup included) and everything of another.
func TestDeletePassRemovesOnlyTheTenant(t *testing.T) {
	w := worktest.New(t)
	seedTenant(t, w, "doomed", DeleteBatch+20)
	seedTenant(t, w, "kept", 3)
	keptBefore := keysNaming(t, w.Store, "kept")
	if len(keptBefore) < 5 {
		t.Fatalf("the kept tenant has %d keys, want its keyring, registry entry, members and invitation", len(keptBefore))
	}
	mark(t, w, "doomed")
	var phases []string
	for passes := 0; ; passes++ {
		if passes > 100 {
			t.Fatal("no end after 100 passes")
		}
		if p := phase(t, w, "doomed"); len(phases) == 0 || phases[len(phases)-1] != p {
			phases = append(phases, p)
		}
		if pass(t, w, "doomed") {
			break
		}
	}
	if want := []string{PhaseTenant, PhaseLookups, PhaseSchedule, PhaseFinish}; strings.Join(phases, ",") != strings.Join(want, ",") {
		t.Errorf("phases = %v, want %v", phases, want)
	}
	if left := keysNaming(t, w.Store, "doomed"); len(left) > 0 {
		t.Errorf("keys left of the deleted tenant: %q", left)
	}
	if after := keysNaming(t, w.Store, "kept"); strings.Join(after, "\n") != strings.Join(keptBefore, "\n") {
		t.Errorf("the other tenant's keys changed:\n%q\nwant\n%q", after, keptBefore)
	}
	if !pass(t, w, "doomed") {
		t.Error("DeletePass after the end = false, want true (no marker)")
	}
}

// TestDeletionStartsOverOnAStraggler: a key written under the tenant after
// the tenant phase (a call that authenticated just before the mark) sends
// the deletion back to that phase instead of being left behind.
func TestDeletionStartsOverOnAStraggler(t *testing.T) {
	w := worktest.New(t)
	seedTenant(t, w, "doomed", 2)
	mark(t, w, "doomed")
	for phase(t, w, "doomed") != PhaseFinish {
		if pass(t, w, "doomed") {
			t.Fatal("DeletePass = true before the finish phase")
		}
	}
	straggler := barrier.Tenant("doomed").Record(unit.EntityTenantMember, "late")
	if err := w.Store.Update(context.Background(), func(tx store.Tx) error {
		return tx.Put([]byte(straggler.String()), []byte("x"))
	}); err != nil {
		t.Fatal(err)
	}
	if pass(t, w, "doomed") || phase(t, w, "doomed") != PhaseTenant {
		t.Fatalf("the finish with a straggler: phase %q, want %q again", phase(t, w, "doomed"), PhaseTenant)
	}
	deadline := time.Now().Add(time.Minute)
	for !pass(t, w, "doomed") {
		if time.Now().After(deadline) {
			t.Fatal("no end within a minute")
		}
	}
	if left := keysNaming(t, w.Store, "doomed"); len(left) > 0 {
		t.Errorf("keys left: %q", left)
	}
}
