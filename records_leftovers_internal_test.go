package tokenvault

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The helpers the root's logs and checkpoints tests took from the record
// tests, which moved to internal/records/behaviour: kept here only until
// those tests move out of the root as well, and deleted with them.

// failingSink refuses every delivery, so that the export queue keeps its
// entries.
type failingSink struct{}

func (failingSink) Name() string { return "walk" }
func (failingSink) Deliver(context.Context, []AuditEvent) error {
	return errors.New("not now")
}

// legacyVault is a Vault on a memory store with a clock that moves when
// told, and an application that may do what these tests do.
type legacyVault struct {
	v     *Vault
	s     *memory.Store
	key   Credential // a private application's: tokens
	mgmt  Credential // the management application's: logs, rotation
	tid   string
	mu    sync.Mutex
	clock time.Time
}

func newLegacyVault(t *testing.T) *legacyVault {
	t.Helper()
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	lv := &legacyVault{s: memory.New(), clock: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	v, err := Open(ctx, Options{
		Store:     lv.s,
		Now:       lv.now,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      KeyOptions{MasterKey: mk},
		Retention: RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	lv.v = v
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Old", Owner: User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		t.Fatal(err)
	}
	lv.tid = boot.Tenant.ID
	app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{
		Name: "old", Type: Private, Permissions: []string{PermTokenCreate, PermTokenRead, PermTokenUpdate},
	})
	if err != nil {
		t.Fatal(err)
	}
	lv.key, lv.mgmt = app.Key, boot.Application.Key
	return lv
}

func (lv *legacyVault) now() time.Time {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.clock
}

func (lv *legacyVault) advance(d time.Duration) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lv.clock = lv.clock.Add(d)
}

func (lv *legacyVault) countKeys(t *testing.T, prefix barrier.Prefix) int {
	t.Helper()
	n := 0
	lv.s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan([]byte(prefix.String()), nil, 0, func(_, _ []byte) error { n++; return nil })
	})
	return n
}

func cardRequestForTest() TokenRequest {
	return TokenRequest{Type: TypeCard, Data: map[string]any{
		"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2099, "cvc": "123"}}
}
