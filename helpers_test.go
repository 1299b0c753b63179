package tokenvault_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

// newClock is the root tests' clock, at the instant they all start from.
func newClock() *testfake.Clock {
	return testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// storeKind names a store implementation the Vault tests run against.
type storeKind struct {
	name string
	open func(t testing.TB) store.Store
}

var storeKinds = []storeKind{
	{"memory", func(t testing.TB) store.Store { return memory.New() }},
	{"bolt", func(t testing.TB) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		return s
	}},
}

// env is one Vault under test with its bootstrap tenant.
type env struct {
	v     *tokenvault.Vault
	store store.Store
	clock *testfake.Clock
	boot  *tokenvault.TenantBootstrap
	mgmt  tokenvault.Credential // the bootstrap management key
	key   []byte                // the master key
}

// forEachStore runs fn once per store implementation.
func forEachStore(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, sk := range storeKinds {
		t.Run("store="+sk.name, func(t *testing.T) {
			fn(t, newEnvOn(t, sk.open(t)))
		})
	}
}

func newMasterKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// newEnv opens a Vault on a memory store.
func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, memory.New())
}

// newEnvOn opens a Vault on s; options adjust its Options.
func newEnvOn(t testing.TB, s store.Store, options ...func(*tokenvault.Options)) *env {
	t.Helper()
	e := &env{store: s, clock: newClock(), key: newMasterKey()}
	opts := tokenvault.Options{
		Store: s,
		Now:   e.clock.Now,
		// Internal errors some tests provoke go to the test's output,
		// shown only when it fails or runs with -v.
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: e.key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		// Webhook receivers and proxy destinations in tests are loopback.
		Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true},
	}
	for _, o := range options {
		o(&opts)
	}
	v, err := tokenvault.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		v.Close()
		s.Close()
	})
	e.v = v
	e.boot = e.tenant(t, "Acme")
	e.mgmt = e.boot.Application.Key
	return e
}

// tenant creates another tenant in the same Vault.
func (e *env) tenant(t testing.TB, name string) *tokenvault.TenantBootstrap {
	t.Helper()
	boot, err := e.v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
		Name: name, Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatalf("CreateTenant(%q): %v", name, err)
	}
	return boot
}

// app creates an application with the bootstrap management key.
func (e *env) app(t testing.TB, typ tokenvault.ApplicationType, perms ...string) *tokenvault.Application {
	t.Helper()
	a, err := e.v.CreateApplication(context.Background(), e.mgmt, tokenvault.CreateApplicationRequest{
		Name: string(typ) + " app", Type: typ, Permissions: perms,
	})
	if err != nil {
		t.Fatalf("CreateApplication(%s %v): %v", typ, perms, err)
	}
	return a
}

// wantKind fails the test unless err has kind k.
func wantKind(t *testing.T, what string, err error, k tokenvault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s = nil error, want %v", what, k)
	}
	if got := tokenvault.ErrorKind(err); got != k {
		t.Fatalf("%s = %v (kind %v), want kind %v", what, err, got, k)
	}
}
