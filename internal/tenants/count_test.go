package tenants

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestCountOnce: Count counts the registry of a store that has no count,
// and leaves a count that exists as it is.
func TestCountOnce(t *testing.T) {
	ctx := context.Background()
	w := worktest.New(t)
	register := func(tids ...string) {
		t.Helper()
		if err := w.Update(ctx, func(tx *unit.Tx) error {
			for _, tid := range tids {
				if err := tx.PutIndex(barrier.Tenant(tid).Registry()); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int, counted bool) {
		t.Helper()
		if err := w.View(ctx, func(tx *unit.Tx) error {
			var err error
			if counted, err = Counted(tx); err != nil || !counted {
				return err
			}
			n, err = tx.ReadCount(barrier.SysTenantCount)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n, counted
	}
	register("t1", "t2", "t3")
	if _, counted := count(); counted {
		t.Fatal("Counted = true before Count")
	}
	if err := w.Update(ctx, Count); err != nil {
		t.Fatal(err)
	}
	if n, counted := count(); !counted || n != 3 {
		t.Fatalf("after Count: %d, counted %v; want 3, true", n, counted)
	}
	register("t4") // without Registered: Count must not count again
	if err := w.Update(ctx, Count); err != nil {
		t.Fatal(err)
	}
	if n, _ := count(); n != 3 {
		t.Errorf("Count on a counted store: %d, want 3 (left as it was)", n)
	}
}

// TestEnsureCount: EnsureCount counts a store without a count once, and
// leaves a count that exists as it is.
func TestEnsureCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := worktest.New(t)
	if err := w.Update(ctx, func(tx *unit.Tx) error {
		for _, tid := range []string{"t1", "t2"} {
			if err := tx.PutIndex(barrier.Tenant(tid).Registry()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := EnsureCount(ctx, w.Work); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := w.View(ctx, func(tx *unit.Tx) error {
			var err error
			n, err = tx.ReadCount(barrier.SysTenantCount)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("after EnsureCount: %d tenants counted, want 2", n)
		}
		if err := w.Update(ctx, func(tx *unit.Tx) error { return tx.PutIndex(barrier.Tenant("t3").Registry()) }); err != nil {
			t.Fatal(err)
		}
	}
}
