package tokenvault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
				if strings.Contains(ks, "/idx/tl-") || strings.Contains(ks, "/count/") || ks == sysListsKey.s {
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
	err := v.update(context.Background(), func(tx *txn) error {
		st := listBuild{Version: listsVersion}
		return tx.buildTokenListsOnce(&st)
	})
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

// TestTokenListsOfTheFirstLayoutAreRebuilt: a store whose lists were
// built by the first layout (readable positions, an index and a count of
// every token: legacyTokenLists) lists exactly as a store of the current
// one once opened, with none of the first layout's entries or counts
// left; its counts are counted again (here they were wrong), and a
// removal cut short after one transaction goes on.
func TestTokenListsOfTheFirstLayoutAreRebuilt(t *testing.T) {
	ctx := context.Background()
	s, open, answer := newBuildFixture(t)
	v := open()
	want := answer(v)

	// The first layout, as its version wrote it, in place of the
	// current one.
	err := s.Update(ctx, func(tx store.Tx) error {
		var cur [][]byte
		err := tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if ks := string(k); strings.Contains(ks, "/idx/tl-") || strings.Contains(ks, "/count/tok-") {
				cur = append(cur, []byte(ks))
			}
			return nil
		})
		for _, k := range cur {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	legacy := 0
	err = v.update(ctx, func(t *txn) error {
		var tenants []string
		err := t.scanKeys(tenantRegistry, func(_ storeKey, tid string) error {
			tenants = append(tenants, tid)
			return nil
		})
		for _, tid := range tenants {
			if err != nil {
				break
			}
			err = func() error {
				ks, err := t.tenantKeys(tid, false)
				if err != nil {
					return err
				}
				kvs, err := t.scanValuesAfter(recordPrefix(tid, kindToken), "", 0)
				if err != nil {
					return err
				}
				for _, kv := range kvs {
					var rec tokenRecord
					if err := t.openRecord(kv.key, kv.raw, &rec); err != nil {
						return err
					}
					pos := timeKey(rec.CreatedAt) + "/" + rec.ID
					keys := []storeKey{indexPrefix(tid, "tok-o").key(pos), indexPrefix(tid, "tok-t").key(rec.Type + "/" + pos)}
					counts := []storeKey{recordKey(tid, "count", "tokens"), tokenTypeCountKey(tid, rec.Type)}
					for _, c := range listContainers(rec.Containers) {
						mac := hex.EncodeToString(ks.mac([]byte("container\x00"), []byte(c)))[:32]
						keys = append(keys, indexPrefix(tid, "tok-c").key(mac+"/"+pos))
						counts = append(counts, tokenContainerCountKey(tid, mac))
					}
					for _, k := range keys {
						if err := t.putIndex(k); err != nil {
							return err
						}
						legacy++
					}
					for _, k := range counts {
						if err := t.putRecord(k, &countRecord{N: 7}); err != nil { // wrong
							return err
						}
					}
				}
				return nil
			}()
		}
		return err
	})
	if err == nil {
		err = v.update(ctx, func(t *txn) error { return t.putRecord(sysListsKey, &listBuild{Done: true}) })
	}
	if err != nil {
		t.Fatal(err)
	}
	if legacy <= listBuildBatch {
		t.Fatalf("%d entries of the first layout: not enough for two transactions", legacy)
	}
	// One transaction of the removal, then the Vault stops.
	err = v.update(ctx, func(t *txn) error {
		var st listBuild
		return t.dropLegacyTokenLists(&st)
	})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()

	v = open()
	defer v.Close()
	if diff := cmp.Diff(want, answer(v)); diff != "" {
		t.Errorf("the rebuilt lists answer differently (-before +after):\n%s", diff)
	}
	err = s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if ks := string(k); strings.Contains(ks, "/idx/tok-") || strings.HasSuffix(ks, "/count/tokens") {
				t.Errorf("%q of the first layout is left", ks)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = v.view(ctx, func(t *txn) error {
		var st listBuild
		if _, err := t.getRecord(sysListsKey, &st); err != nil || !st.Done || !st.current() {
			return fmt.Errorf("marker %+v, %v; want a done build of version %d", st, err, listsVersion)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// newBuildFixture makes a memory store of two tenants with tokens of
// several types, containers and ids, and returns it, a function opening a
// Vault on it, and one answering a set of lists (tokens, by cursor too, and
// applications) as a comparable value.
func newBuildFixture(t *testing.T) (s *memory.Store, open func() *Vault, answer func(v *Vault) []any) {
	t.Helper()
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	s = memory.New()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	open = func() *Vault {
		v, err := Open(ctx, Options{Store: s, MasterKey: mk, SweepInterval: -1, Now: func() time.Time { return now },
			Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := open()
	var keys, mgmts []string
	for _, name := range []string{"Old", "Other"} {
		boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: name, Owner: User{Email: "o@example.com", FirstName: "O"}})
		if err != nil {
			t.Fatal(err)
		}
		app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{
			Name: "old", Type: Private, Permissions: []string{PermTokenCreate, PermTokenRead},
		})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, app.Key)
		mgmts = append(mgmts, boot.Application.Key)
	}
	// More tokens than one build transaction lists, of both types and in
	// several containers, some with custom ids.
	body := make([]any, 0, listBuildBatch+300)
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
	now = now.Add(time.Second)
	if _, err := v.Tokenize(ctx, keys[1], []any{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	queries := []ListTokensRequest{
		{},
		{PageRequest: PageRequest{Size: 100, Page: 3}},
		{Type: TypeCard, PageRequest: PageRequest{Size: 7}},
		{Container: "/a/", PageRequest: PageRequest{Size: 50}},
		{Container: "/a/b/", Type: TypeToken},
		{Type: TypeBank},
	}
	answer = func(v *Vault) (out []any) {
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
			apps, err := v.ListApplications(ctx, mgmt, ListApplicationsRequest{})
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
