//go:build linux

package vaulttest_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestStorageFullOnARealDisk fills a small tmpfs under a bbolt Vault: the
// first refused token write is StorageFull (bbolt's ENOSPC, wrapped by
// store/bolt), Ready fails while token writes fail, and once a side file
// is removed Ready and writes succeed, every acknowledged token readable.
// It mounts a file system, so it runs only when asked, as root:
//
//	sudo TOKENVAULT_FULL_DISK_TEST=1 go test -run TestStorageFullOnARealDisk -v .
func TestStorageFullOnARealDisk(t *testing.T) {
	if os.Getenv("TOKENVAULT_FULL_DISK_TEST") == "" {
		t.Skip("set TOKENVAULT_FULL_DISK_TEST=1 (as root) to mount a small tmpfs and fill it")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"}})
	if err != nil {
		t.Fatal(err)
	}
	// A side file takes all the room but about 256 KiB.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 64<<10)
	n := 0
	for ; ; n++ {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	f.Truncate(int64(n-4) * int64(len(block)))
	f.Close()

	var acknowledged []string
	var refused error
	for i := 0; refused == nil; i++ {
		tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"i": i, "pad": string(make([]byte, 200))}})
		if err != nil {
			refused = err
			break
		}
		acknowledged = append(acknowledged, tok.ID)
	}
	vaulttest.WantKind(t, "CreateToken on a full disk", refused, tokenvault.StorageFull)
	failed := 0
	for i := range 50 {
		_, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"j": i, "pad": string(make([]byte, 200))}})
		if err == nil {
			t.Fatalf("a token write after the first refused one succeeded: the disk is not full")
		}
		vaulttest.WantKind(t, "CreateToken on a full disk", err, tokenvault.StorageFull)
		failed++
	}
	vaulttest.WantKind(t, "Ready on a full disk", v.Ready(ctx), tokenvault.StorageFull)
	t.Logf("%d tokens acknowledged, then %d token writes refused as StorageFull; Ready failed", len(acknowledged), failed+1)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := v.Ready(ctx); err != nil {
		t.Fatalf("Ready once space is freed = %v", err)
	}
	if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "after"}); err != nil {
		t.Fatalf("CreateToken once space is freed = %v", err)
	}
	for _, id := range acknowledged {
		if _, err := v.GetToken(ctx, app.Key, id); err != nil {
			t.Fatalf("GetToken(%s), acknowledged before the disk filled = %v", id, err)
		}
	}
}
