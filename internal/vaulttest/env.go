package vaulttest

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

// NewClock is the Vault tests' clock, at the instant they all start from.
func NewClock() *testfake.Clock {
	return testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// StoreKind names a store implementation the Vault tests run against.
type StoreKind struct {
	Name string
	Open func(t testing.TB) store.Store
}

// StoreKinds are the stores every Vault test runs against: memory and
// bbolt, and PostgreSQL when TOKENVAULT_TEST_POSTGRES_DSN names a server
// (postgres.go adds it).
var StoreKinds = []StoreKind{
	{"memory", func(t testing.TB) store.Store { return memory.New() }},
	{"bolt", func(t testing.TB) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		return s
	}},
}

// Env is one Vault under test with its bootstrap tenant.
type Env struct {
	V     *tokenvault.Vault
	Store store.Store
	Clock *testfake.Clock
	Boot  *tokenvault.TenantBootstrap
	Mgmt  tokenvault.Credential // the bootstrap management key
	Key   []byte                // the master key
}

// ForEachStore runs fn once per store implementation.
func ForEachStore(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Helper()
	for _, sk := range StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			fn(t, NewEnvOn(t, sk.Open(t)))
		})
	}
}

// NewMasterKey is a random 32-byte master key.
func NewMasterKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// NewEnv opens a Vault on a memory store.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	return NewEnvOn(t, memory.New())
}

// NewEnvOn opens a Vault on s; options adjust its Options.
func NewEnvOn(t testing.TB, s store.Store, options ...func(*tokenvault.Options)) *Env {
	t.Helper()
	e := &Env{Store: s, Clock: NewClock(), Key: NewMasterKey()}
	opts := tokenvault.Options{
		Store: s,
		Now:   e.Clock.Now,
		// Internal errors some tests provoke go to the test's output,
		// shown only when it fails or runs with -v.
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: e.Key},
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
	e.V = v
	e.Boot = e.Tenant(t, "Acme")
	e.Mgmt = e.Boot.Application.Key
	return e
}

// Tenant creates another tenant in the same Vault.
func (e *Env) Tenant(t testing.TB, name string) *tokenvault.TenantBootstrap {
	t.Helper()
	boot, err := e.V.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
		Name: name, Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatalf("CreateTenant(%q): %v", name, err)
	}
	return boot
}

// App creates an application with the bootstrap management key.
func (e *Env) App(t testing.TB, typ tokenvault.ApplicationType, perms ...string) *tokenvault.Application {
	t.Helper()
	a, err := e.V.CreateApplication(context.Background(), e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: string(typ) + " app", Type: typ, Permissions: perms,
	})
	if err != nil {
		t.Fatalf("CreateApplication(%s %v): %v", typ, perms, err)
	}
	return a
}

// WantKind fails the test unless err has kind k.
func WantKind(t *testing.T, what string, err error, k tokenvault.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s = nil error, want %v", what, k)
	}
	if got := tokenvault.ErrorKind(err); got != k {
		t.Fatalf("%s = %v (kind %v), want kind %v", what, err, got, k)
	}
}

// ctx is the context of the helpers' calls to the Vault: they are never
// cancelled.
var ctx = context.Background()

// ForEachStoreB runs fn once per store implementation, as ForEachStore
// does for tests.
func ForEachStoreB(b *testing.B, fn func(b *testing.B, e *Env)) {
	for _, sk := range StoreKinds {
		b.Run("store="+sk.Name, func(b *testing.B) { fn(b, NewEnvOn(b, sk.Open(b))) })
	}
}
