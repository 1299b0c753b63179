package vaulttest_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestCountsSurviveARestart: a Vault on a bbolt file writes tokens and
// stops with its delta rows not folded (as a crash leaves them); the
// next Vault on the file folds, at Open, what its predecessor left into
// the base rows, and reads the same counts.
func TestCountsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	clock, key := vaulttest.NewClock(), vaulttest.NewMasterKey()
	s, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	v := openCountVault(t, s, key, clock)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme", Owner: tokenvault.User{Email: "o@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	app := tokenApp(t, v, boot.Application.Key)
	for i := range 10 {
		if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(i), Containers: []string{"/a/"}}); err != nil {
			t.Fatal(err)
		}
	}
	left := deltaRows(t, s)
	if left == 0 {
		t.Fatal("no delta rows after 10 tokens: nothing to fold")
	}
	// Close without Vault.Close: the folder of a crashed process never
	// runs again. (Its goroutine stops with the store.)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	v.Close()

	s, err = bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	v = openCountVault(t, s, key, clock)
	t.Cleanup(func() { v.Close() })
	if n := deltaRows(t, s); n != 0 {
		t.Errorf("%d delta rows after the new Vault opened on the %d its predecessor left, want 0", n, left)
	}
	if walked, total := walkTokens(t, v, app.Key, tokenvault.ListTokensRequest{Container: "/a/"}); walked != 10 || total != 10 {
		t.Errorf("after the restart: ListTokens(/a/) walks %d, total_items %d; want 10", walked, total)
	}
	if walked, total := walkTokens(t, v, app.Key, tokenvault.ListTokensRequest{}); walked != 10 || total != 10 {
		t.Errorf("after folding: ListTokens walks %d, total_items %d; want 10", walked, total)
	}
}

// TestCountsFoldRowsOfAGoneInstance: on PostgreSQL, the delta rows of a
// Vault that stopped are folded by another once they are older than
// barrier.StaleAfter, and not before; the counts read the same
// throughout.
func TestCountsFoldRowsOfAGoneInstance(t *testing.T) {
	if vaulttest.PGDSN == "" {
		t.Skip(vaulttest.PGSkip)
	}
	for _, sk := range countStores {
		if sk.name != "postgres" {
			continue
		}
		sa, sb, _ := sk.open(t)
		t.Cleanup(func() { sa.Close(); sb.Close() })
		clock, key := vaulttest.NewClock(), vaulttest.NewMasterKey()
		a := openCountVault(t, sa, key, clock)
		b := openCountVault(t, sb, key, clock)
		t.Cleanup(func() { b.Close() })
		boot, err := a.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme", Owner: tokenvault.User{Email: "o@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		app := tokenApp(t, a, boot.Application.Key)
		for i := range 6 {
			if _, err := a.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
		check := func(when string) {
			t.Helper()
			if walked, total := walkTokens(t, b, app.Key, tokenvault.ListTokensRequest{}); walked != 6 || total != 6 {
				t.Errorf("%s: ListTokens walks %d, total_items %d; want 6", when, walked, total)
			}
		}
		check("A gone")
		if _, err := vaulttest.FoldCounts(ctx, b); err != nil {
			t.Fatal(err)
		}
		if n := deltaRows(t, sb); n == 0 {
			t.Errorf("B folded A's fresh rows (0 delta rows left); they are not stale yet")
		}
		check("after a fold before A's rows are stale")
		clock.Advance(11 * time.Minute)
		if _, err := vaulttest.FoldCounts(ctx, b); err != nil {
			t.Fatal(err)
		}
		if n := deltaRows(t, sb); n != 0 {
			t.Errorf("%d delta rows left after B folded A's stale rows, want 0", n)
		}
		check("after B folded A's stale rows")
	}
}

// TestFailedCommitsChangeNoCount: a tokenize whose commit fails at any
// of its writes changes no count; one that succeeds counts once.
func TestFailedCommitsChangeNoCount(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs)
	app := tokenApp(t, e.V, e.Mgmt)
	want := 0
	for n := 0; ; n++ {
		fs.FailAfter(n)
		_, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(n), Containers: []string{"/a/"}})
		fs.FailAfter(-1)
		if err == nil {
			want++
		} else if !errors.Is(err, storetest.ErrInjected) && tokenvault.ErrorKind(err) != tokenvault.Internal {
			t.Fatalf("CreateToken with a write failing after %d: %v", n, err)
		}
		for _, req := range []tokenvault.ListTokensRequest{{}, {Container: "/a/"}, {Type: "token"}} {
			if walked, total := walkTokens(t, e.V, app.Key, req); walked != want || total != want {
				t.Fatalf("after a commit failing at write %d: ListTokens(%+v) walks %d, total_items %d; want %d", n, req, walked, total, want)
			}
		}
		if err == nil {
			break
		}
	}
	if want != 1 {
		t.Errorf("%d tokens created, want 1", want)
	}
}
