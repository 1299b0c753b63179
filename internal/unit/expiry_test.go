package unit_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

const (
	expiryTenant = "0190f5a2-9000-7000-8000-0000000000e1"
	goneTenant   = "0190f5a2-9000-7000-8000-0000000000e2"
)

// TestSweepExpired holds the sweeper's loop to its registry: due entries
// go to the handler of their kind, in time order and in batches, each
// entry removed with its work; entries not yet due, of a kind none
// handles, or of a tenant being deleted are nothing to do; a handler's
// error undoes its batch.
func TestSweepExpired(t *testing.T) {
	ctx := context.Background()
	w := worktest.New(t)
	w.Tenant(t, expiryTenant)
	now := w.Now()
	entry := func(tid string, at time.Time, kind, id string) barrier.Key {
		return barrier.Tenant(tid).Expiry(at, kind, id)
	}
	keys := []barrier.Key{
		entry(expiryTenant, now.Add(-3*time.Second), "a", "1"),
		entry(expiryTenant, now.Add(-2*time.Second), "b", "2"),
		entry(expiryTenant, now.Add(-time.Second), "a", "3"),
		entry(expiryTenant, now, "unknown", "4"),
		entry(goneTenant, now, "a", "5"),
		entry(expiryTenant, now.Add(time.Hour), "a", "6"), // not due
	}
	err := w.Update(ctx, func(tx *unit.Tx) error {
		for _, k := range keys {
			if err := tx.PutIndex(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		ended   []string
		counted []string
		fail    error
	)
	expire := func(t *unit.Tx, tid, id string) (bool, error) {
		if tid == goneTenant {
			_, err := t.TenantKeys(tid, false) // the barrier's TenantGone error
			return false, err
		}
		if fail != nil {
			return false, fail
		}
		ended = append(ended, id)
		return id != "3", nil // 3 is no longer expired
	}
	kinds := map[string]unit.ExpiryKind{
		"a": {Kind: "a", Swept: "as", Expire: expire},
		"b": {Kind: "b", Swept: "bs", Expire: expire},
	}
	swept := func(_ *unit.Tx, k unit.ExpiryKind) { counted = append(counted, k.Swept) }

	fail = errors.New("handler failed")
	if _, _, err := w.SweepExpired(ctx, kinds, 2, swept); !errors.Is(err, fail) {
		t.Fatalf("SweepExpired with a failing handler = %v, want %v", err, fail)
	}
	fail = nil

	removed, more, err := w.SweepExpired(ctx, kinds, 2, swept)
	if err != nil || removed != 2 || !more {
		t.Fatalf("first SweepExpired = %d, %v, %v, want 2, true, nil", removed, more, err)
	}
	removed, more, err = w.SweepExpired(ctx, kinds, 2, swept)
	if err != nil || removed != 0 || !more {
		t.Fatalf("second SweepExpired = %d, %v, %v, want 0, true, nil", removed, more, err)
	}
	removed, more, err = w.SweepExpired(ctx, kinds, 2, swept)
	if err != nil || removed != 0 || more {
		t.Fatalf("third SweepExpired = %d, %v, %v, want 0, false, nil", removed, more, err)
	}
	if want := []string{"1", "2", "3"}; !slices.Equal(ended, want) {
		t.Errorf("handled %v, want %v", ended, want)
	}
	if want := []string{"as", "bs"}; !slices.Equal(counted, want) {
		t.Errorf("counted %v, want %v", counted, want)
	}
	err = w.View(ctx, func(tx *unit.Tx) error {
		for i, k := range keys {
			has, err := tx.Has(k)
			if err != nil {
				return err
			}
			if want := i == len(keys)-1; has != want {
				t.Errorf("entry %s present = %v, want %v", k, has, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
