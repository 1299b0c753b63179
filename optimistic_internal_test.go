package tokenvault

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The snapshot's own tests (its conformance, its answers against a plain
// transaction's, its conflict detection) are internal/barrier's
// snapshot_test.go.

// pausingStore lets a test act between the two transactions of an
// optimistic update: once armed, the next View calls between when it ends.
type pausingStore struct {
	store.Store
	between atomic.Pointer[func()]
}

func (*pausingStore) SingleProcess() {}

func (s *pausingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	err := s.Store.View(ctx, fn)
	if f := s.between.Swap(nil); f != nil {
		(*f)()
	}
	return err
}

// TestOptimisticUpdateSeesRevocation revokes a key after an optimistic
// create authorized with it from the cache but before the create is
// applied: the create must run again and be refused, since the key was
// revoked before its write.
func TestOptimisticUpdateSeesRevocation(t *testing.T) {
	ctx := context.Background()
	ps := &pausingStore{Store: memory.New()}
	v, err := Open(ctx, Options{Store: ps, Keys: KeyOptions{MasterKey: bytes.Repeat([]byte{7}, 32)}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !v.optimistic {
		t.Fatal("a SingleProcess store does not get optimistic updates")
	}
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{Name: "a", Type: Private, Permissions: []string{PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	// Warm the auth cache, so the first run authorizes without reading.
	if _, err := v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeToken, Data: "warm"}); err != nil {
		t.Fatal(err)
	}
	revoke := func() {
		if err := v.DeleteApplication(ctx, boot.Application.Key, app.ID); err != nil {
			t.Errorf("DeleteApplication = %v", err)
		}
	}
	ps.between.Store(&revoke)
	retries := v.work.OptimisticRetries()
	_, err = v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeToken, Data: "late"})
	if e, ok := err.(*Error); !ok || e.Kind != Unauthenticated {
		t.Fatalf("CreateToken with a key revoked before its write = %v, want Unauthenticated", err)
	}
	if v.work.OptimisticRetries() != retries+1 {
		t.Errorf("the create was not run again")
	}
}
