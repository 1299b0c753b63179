package access_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// countingStore counts reads of API key lookups.
type countingStore struct {
	*memory.Store
	keyReads atomic.Int64
}

type countingTx struct {
	store.Tx
	s *countingStore
}

func (c *countingTx) Get(key []byte) ([]byte, error) {
	if strings.HasPrefix(string(key), "sys/apikey/") {
		c.s.keyReads.Add(1)
	}
	return c.Tx.Get(key)
}

func (s *countingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(&countingTx{tx, s}) })
}

func (s *countingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(&countingTx{tx, s}) })
}

func TestRecentKeysAreNotReadAgain(t *testing.T) {
	cs := &countingStore{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, cs)
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	before := cs.keyReads.Load()
	for range 10 {
		if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"a": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := cs.keyReads.Load() - before; n != 0 {
		t.Errorf("%d key lookups for a key used 10 times in a row, want 0", n)
	}

	// Every change that affects a key is seen at once.
	regen, err := e.V.RegenerateApplicationKey(ctx, e.Mgmt, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.Tokenize(ctx, app.Key, map[string]any{"a": "1"})
	vaulttest.WantKind(t, "old key after regenerate", err, tokenvault.Unauthenticated)
	if _, err := e.V.Tokenize(ctx, regen.Key, map[string]any{"a": "1"}); err != nil {
		t.Fatalf("new key: %v", err)
	}
	if _, err := e.V.UpdateApplication(ctx, e.Mgmt, app.ID, tokenvault.UpdateApplicationRequest{Name: "x", Permissions: []string{"token:read"}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.Tokenize(ctx, regen.Key, map[string]any{"a": "1"})
	vaulttest.WantKind(t, "a permission removed", err, tokenvault.PermissionDenied)
	if err := e.V.DeleteApplication(ctx, e.Mgmt, app.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.GetToken(ctx, regen.Key, "x")
	vaulttest.WantKind(t, "deleted application's key", err, tokenvault.Unauthenticated)

	at := e.Clock.Now().Add(time.Minute)
	exp, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "e", Type: tokenvault.Private, Permissions: []string{"token:create"}, ExpiresAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.Tokenize(ctx, exp.Key, map[string]any{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Minute)
	_, err = e.V.Tokenize(ctx, exp.Key, map[string]any{"a": "1"})
	vaulttest.WantKind(t, "cached key at its expiry", err, tokenvault.Unauthenticated)
}

// TestHotKeysStayCachedBeyondTheBound uses twice as many keys as the
// authentication cache holds (bound lowered to 20 for the test), with a few
// hot keys used between every other: the hot keys are never read from the
// store again, and the cache keeps to its bound.
func TestHotKeysStayCachedBeyondTheBound(t *testing.T) {
	const bound, hot, cold = 20, 3, 2 * 20
	cs := &countingStore{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, cs)
	vaulttest.ResizeAuthCache(e.V, bound)
	var hotKeys, coldKeys []tokenvault.Credential
	for range hot {
		hotKeys = append(hotKeys, e.App(t, tokenvault.Private, "token:create").Key)
	}
	for range cold {
		coldKeys = append(coldKeys, e.App(t, tokenvault.Private, "token:create").Key)
	}
	use := func(key tokenvault.Credential) {
		t.Helper()
		if _, err := e.V.Tokenize(ctx, key, map[string]any{"a": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range hotKeys {
		use(k)
	}
	var hotReads int64
	for _, c := range coldKeys {
		use(c)
		before := cs.keyReads.Load()
		for _, k := range hotKeys {
			use(k)
		}
		hotReads += cs.keyReads.Load() - before
	}
	if hotReads != 0 {
		t.Errorf("%d key lookups for %d hot keys used between %d others, want 0", hotReads, hot, cold)
	}
	if n := vaulttest.AuthCacheLen(e.V); n > bound {
		t.Errorf("the cache holds %d entries, over its bound %d", n, bound)
	}
}
