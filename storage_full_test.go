package tokenvault_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
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
			e := newEnvOn(t, fs)
			tokens := e.reader(t, "reveal", "token:create", "token:read")
			kept, err := e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "kept"})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.v.Ready(ctx); err != nil {
				t.Fatalf("Ready before the disk fills = %v", err)
			}

			settleChain(t, e.v)
			before := dump(t, fs)
			fs.FailWith(full)
			fs.FailAfter(0)
			_, err = e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "lost"})
			wantKind(t, "CreateToken on a full disk", err, tokenvault.StorageFull)
			if !errors.Is(err, tokenvault.ErrStorageFull) || !strings.Contains(err.Error(), "storage is full") {
				t.Errorf("CreateToken on a full disk = %v, want ErrStorageFull saying storage is full", err)
			}
			var te *tokenvault.Error
			if errors.As(err, &te) && te.RetryAfter <= 0 {
				t.Errorf("CreateToken on a full disk: RetryAfter = %v, want when to try again", te.RetryAfter)
			}
			wantKind(t, "Ready on a full disk", e.v.Ready(ctx), tokenvault.StorageFull)
			wantKind(t, "Ready on a full disk, again", e.v.Ready(ctx), tokenvault.StorageFull)
			if diff := cmp.Diff(before, dump(t, fs)); diff != "" {
				t.Errorf("a refused write left something behind (-before +after):\n%s", diff)
			}

			fs.FailAfter(-1) // space freed
			if err := e.v.Ready(ctx); err != nil {
				t.Fatalf("Ready once space is freed = %v", err)
			}
			if diff := cmp.Diff(before, dump(t, fs)); diff != "" {
				t.Errorf("Ready's write left something behind (-before +after):\n%s", diff)
			}
			if _, err := e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "after"}); err != nil {
				t.Errorf("CreateToken once space is freed = %v", err)
			}
			got, err := e.v.GetToken(ctx, tokens.Key, kept.ID)
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
	e := newEnvOn(t, fs)
	tokens := e.reader(t, "reveal", "token:create")
	fs.FailWith(syscall.ENOSPC)
	fs.FailAfter(0)
	_, err := e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	wantKind(t, "CreateToken on a full disk", err, tokenvault.StorageFull)
	fs.FailAfter(-1)
	if _, err := e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
		t.Fatal(err)
	}
	settleChain(t, e.v)
	before := dump(t, fs)
	fs.FailAfter(0)
	wantKind(t, "Ready after a small write committed, the probe refused", e.v.Ready(ctx), tokenvault.StorageFull)
	fs.FailAfter(1) // the probe's put commits, its delete does not
	wantKind(t, "Ready with the probe's deletion refused", e.v.Ready(ctx), tokenvault.StorageFull)
	if len(dump(t, fs)) != len(before)+1 {
		t.Errorf("the probe's value is not in the store after its deletion failed")
	}
	fs.FailAfter(-1)
	if err := e.v.Ready(ctx); err != nil {
		t.Fatalf("Ready once space is freed = %v", err)
	}
	if diff := cmp.Diff(before, dump(t, fs)); diff != "" {
		t.Errorf("the probe left something behind (-before +after):\n%s", diff)
	}
	// Cleared: Ready no longer writes.
	fs.FailWith(nil)
	fs.FailAfter(0)
	defer fs.FailAfter(-1)
	if err := e.v.Ready(ctx); err != nil {
		t.Errorf("Ready once the probe committed, writes failing = %v, want nil (it only reads)", err)
	}
}
