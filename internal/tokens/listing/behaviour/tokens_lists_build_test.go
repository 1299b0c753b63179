package listing_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestTokenListsBuiltForAnOlderStore: a store written before the token
// list indexes and counts (and the counts of applications and the other
// counted records) existed (made here by removing them, and the
// build's marker, from a store) lists exactly as before once opened: the
// build at Open lists every token once, in batches, and goes on where a
// build cut short stopped without counting a token twice.
func TestTokenListsBuiltForAnOlderStore(t *testing.T) {
	s, open, answer := newBuildFixture(t)
	v := open()
	want := answer(v)
	v.Close()

	// An older store: no list index, no count, no marker.
	strip := func() {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			var old [][]byte
			err := tx.Scan(nil, nil, 0, func(k, _ []byte) error {
				ks := string(k)
				if strings.Contains(ks, "/idx/tl-") || strings.Contains(ks, "/count/") || strings.Contains(ks, "/token_shape/") ||
					ks == barrier.SysLists.String() || ks == barrier.SysShapeLists.String() {
					old = append(old, []byte(ks))
				}
				return nil
			})
			for _, k := range old {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	strip()
	v = open()
	if diff := cmp.Diff(want, answer(v)); diff != "" {
		t.Errorf("the built lists answer differently (-before +after):\n%s", diff)
	}

	// A build cut short after its first transaction goes on from there.
	v.Close()
	strip()
	v = open() // the handle to run one batch with; its own build ran
	strip()
	// One batch of the build, the lists having forgotten what they knew
	// of the registries stripped.
	err := vaulttest.BuildListsOnce(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	v = open()
	defer v.Close()
	if diff := cmp.Diff(want, answer(v)); diff != "" {
		t.Errorf("after a build cut short, the lists answer differently (-before +after):\n%s", diff)
	}
}

// TestTokenListsRebuiltByShape: a store whose lists were kept the way
// they were before shapes (an entry in the index of each token's type and
// of each of its containers and their ancestors, a count each) lists
// exactly as before once opened, and keeps none of those entries and
// counts: the build removes them, in transactions of at most
// listing.BuildBatch keys, and lists every token in its shape.
func TestTokenListsRebuiltByShape(t *testing.T) {
	s, open, answer := newBuildFixture(t)
	v := open()
	want := answer(v)
	v.Close()

	// The lists as they were kept before (their values are not read: the
	// build only removes them), more than one transaction removes, and
	// no shape list, count, registry or build marker.
	var tids []string
	err := s.Update(ctx, func(tx store.Tx) error {
		var gone [][]byte
		err := tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			ks := string(k)
			if strings.Contains(ks, "/idx/tl-s/") || strings.Contains(ks, "/count/tok-s/") ||
				strings.Contains(ks, "/token_shape/") || ks == barrier.SysShapeLists.String() {
				gone = append(gone, []byte(ks))
			}
			if tid, ok := strings.CutPrefix(ks, barrier.TenantRegistry.String()); ok {
				tids = append(tids, tid)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range gone {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		for _, tid := range tids {
			old := barrier.Tenant(tid).LegacyTokenLists()
			for i := range listing.BuildBatch + 200 {
				pos := fmt.Sprintf("%08d", i)
				for _, k := range []barrier.Key{old[0].Key("token/" + pos), old[1].Key("0123456789abcdef" + pos)} {
					if err := tx.Put([]byte(k.String()), nil); err != nil {
						return err
					}
				}
			}
			for _, k := range []barrier.Key{old[2].Key("card"), old[3].Key("0123456789abcdef")} {
				if err := tx.Put([]byte(k.String()), []byte("sealed")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tids) != 2 {
		t.Fatalf("%d tenants in the fixture, want 2", len(tids))
	}

	v = open()
	defer v.Close()
	if diff := cmp.Diff(want, answer(v)); diff != "" {
		t.Errorf("the lists rebuilt by shape answer differently (-before +after):\n%s", diff)
	}
	err = s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			ks := string(k)
			for _, tid := range tids {
				for _, p := range barrier.Tenant(tid).LegacyTokenLists() {
					if strings.HasPrefix(ks, p.String()) {
						t.Errorf("%q: a list key from before shapes is left", ks)
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newBuildFixture makes a memory store of two tenants with tokens of
// several types, containers and ids, and returns it, a function opening a
// Vault on it, and one answering a set of lists (tokens, by cursor too, and
// applications) as a comparable value.
func newBuildFixture(t *testing.T) (s *memory.Store, open func() *tokenvault.Vault, answer func(v *tokenvault.Vault) []any) {
	t.Helper()
	mk := make([]byte, 32)
	rand.Read(mk)
	s = memory.New()
	// The clock, read by the Vault's background work (the linker) too.
	var clockMu sync.Mutex
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return now
	}
	open = func() *tokenvault.Vault {
		v, err := tokenvault.Open(ctx, tokenvault.Options{
			Store:     s,
			Now:       clock,
			Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
			Keys:      tokenvault.KeyOptions{MasterKey: mk},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := open()
	var keys, mgmts []tokenvault.Credential
	for _, name := range []string{"Old", "Other"} {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name, Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
		if err != nil {
			t.Fatal(err)
		}
		app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "old", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead},
		})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, app.Key)
		mgmts = append(mgmts, boot.Application.Key)
	}
	// More tokens than one build transaction lists, of both types and in
	// several containers, some with custom ids.
	body := make([]any, 0, listing.BuildBatch+300)
	for i := range cap(body) {
		switch i % 7 {
		case 0:
			body = append(body, map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039}})
		case 1:
			body = append(body, map[string]any{"type": "token", "data": "x", "containers": []any{"/a/b/"}, "id": fmt.Sprintf("custom-%04d", 9999-i)})
		default:
			body = append(body, fmt.Sprint("value ", i))
		}
	}
	if _, err := v.Tokenize(ctx, keys[0], body); err != nil {
		t.Fatal(err)
	}
	clockMu.Lock()
	now = now.Add(time.Second)
	clockMu.Unlock()
	if _, err := v.Tokenize(ctx, keys[1], []any{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	queries := []tokenvault.ListTokensRequest{
		{},
		{PageRequest: tokenvault.PageRequest{Size: 100, Page: 3}},
		{Type: tokenvault.TypeCard, PageRequest: tokenvault.PageRequest{Size: 7}},
		{Container: "/a/", PageRequest: tokenvault.PageRequest{Size: 50}},
		{Container: "/a/b/", Type: tokenvault.TypeToken},
		{Type: tokenvault.TypeBank},
	}
	answer = func(v *tokenvault.Vault) (out []any) {
		for _, key := range keys {
			for _, q := range queries {
				p, err := v.ListTokens(ctx, key, q)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, p)
				if p.Pagination.After != "" {
					q.Start, q.Page = p.Pagination.After, 0
					next, err := v.ListTokens(ctx, key, q)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, next)
				}
			}
		}
		for _, mgmt := range mgmts {
			apps, err := v.ListApplications(ctx, mgmt, tokenvault.ListApplicationsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, apps)
		}
		return out
	}
	v.Close()
	return s, open, answer
}
