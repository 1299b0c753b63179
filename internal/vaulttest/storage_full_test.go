package vaulttest_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestStorageFull makes every write fail as a full disk does (a bare
// ENOSPC, and store.ErrFull as the backends wrap it): a write is
// StorageFull saying so, nothing is written, Ready fails while writes
// fail, and once space is back Ready and writes succeed without a restart,
// everything written before still there.
func TestStorageFull(t *testing.T) {
	for _, full := range []error{syscall.ENOSPC, fmt.Errorf("%w: %w", store.ErrFull, syscall.EDQUOT)} {
		t.Run(full.Error(), func(t *testing.T) {
			fs := storetest.NewFaultStore(memory.New())
			e := vaulttest.NewEnvOn(t, fs)
			tokens := e.Reader(t, "reveal", "token:create", "token:read")
			kept, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "kept"})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.V.Ready(ctx); err != nil {
				t.Fatalf("Ready before the disk fills = %v", err)
			}

			e.SettleChain(t)
			before := vaulttest.Dump(t, fs)
			fs.FailWith(full)
			fs.FailAfter(0)
			_, err = e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "lost"})
			vaulttest.WantKind(t, "CreateToken on a full disk", err, tokenvault.StorageFull)
			if !errors.Is(err, tokenvault.ErrStorageFull) || !strings.Contains(err.Error(), "storage is full") {
				t.Errorf("CreateToken on a full disk = %v, want ErrStorageFull saying storage is full", err)
			}
			var te *tokenvault.Error
			if errors.As(err, &te) && te.RetryAfter <= 0 {
				t.Errorf("CreateToken on a full disk: RetryAfter = %v, want when to try again", te.RetryAfter)
			}
			vaulttest.WantKind(t, "Ready on a full disk", e.V.Ready(ctx), tokenvault.StorageFull)
			vaulttest.WantKind(t, "Ready on a full disk, again", e.V.Ready(ctx), tokenvault.StorageFull)
			if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
				t.Errorf("a refused write left something behind (-before +after):\n%s", diff)
			}

			fs.FailAfter(-1) // space freed
			if err := e.V.Ready(ctx); err != nil {
				t.Fatalf("Ready once space is freed = %v", err)
			}
			if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
				t.Errorf("Ready's write left something behind (-before +after):\n%s", diff)
			}
			if _, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "after"}); err != nil {
				t.Errorf("CreateToken once space is freed = %v", err)
			}
			got, err := e.V.GetToken(ctx, tokens.Key, kept.ID)
			if err != nil || got.Data != "kept" {
				t.Errorf("GetToken(written before) = %+v, %v", got, err)
			}
		})
	}
}

// TestReadyProbesItsOwnWrite: after a refused write, Ready is nil only
// once its own write (put, then delete, of a value bigger than a token
// write) commits: another write that commits does not make it ready, since
// near a full disk a small write fits where a bigger one does not; a probe
// whose deletion fails is retried, and leaves nothing once it succeeds.
func TestReadyProbesItsOwnWrite(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs)
	tokens := e.Reader(t, "reveal", "token:create")
	fs.FailWith(syscall.ENOSPC)
	fs.FailAfter(0)
	_, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	vaulttest.WantKind(t, "CreateToken on a full disk", err, tokenvault.StorageFull)
	fs.FailAfter(-1)
	if _, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
		t.Fatal(err)
	}
	e.SettleChain(t)
	before := vaulttest.Dump(t, fs)
	fs.FailAfter(0)
	vaulttest.WantKind(t, "Ready after a small write committed, the probe refused", e.V.Ready(ctx), tokenvault.StorageFull)
	fs.FailAfter(1) // the probe's put commits, its delete does not
	vaulttest.WantKind(t, "Ready with the probe's deletion refused", e.V.Ready(ctx), tokenvault.StorageFull)
	if len(vaulttest.Dump(t, fs)) != len(before)+1 {
		t.Errorf("the probe's value is not in the store after its deletion failed")
	}
	fs.FailAfter(-1)
	if err := e.V.Ready(ctx); err != nil {
		t.Fatalf("Ready once space is freed = %v", err)
	}
	if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
		t.Errorf("the probe left something behind (-before +after):\n%s", diff)
	}
	// Cleared: Ready no longer writes.
	fs.FailWith(nil)
	fs.FailAfter(0)
	defer fs.FailAfter(-1)
	if err := e.V.Ready(ctx); err != nil {
		t.Errorf("Ready once the probe committed, writes failing = %v, want nil (it only reads)", err)
	}
}
