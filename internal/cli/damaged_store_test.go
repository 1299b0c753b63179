package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedStoreFailsWithoutPanic: a server whose bbolt file has pages
// overwritten (meta pages zeroed, random bytes in the middle of the file,
// the freelist page, the file cut short) refuses to start: it exits 1
// naming the file and saying how to restore it from a backup, with no
// panic or goroutine dump. The command runs in a child process, so that a
// panic on any goroutine shows as the child's output instead of killing
// the test.
func TestDamagedStoreFailsWithoutPanic(t *testing.T) {
	if os.Getenv("TOKENVAULT_CLI_CHILD") != "" {
		t.Skip("in the child")
	}
	good := t.TempDir()
	addr, _, stop := start(t, good, nil)
	key := createRevealApp(t, addr, readManagementKey(t, good))
	for i := range 400 {
		body := tokenizeBody(fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 200)))
		if _, status, answer, err, _ := tokenize(http.DefaultClient, addr, key, bytes.NewReader(body), int64(len(body))); err != nil || status != http.StatusCreated {
			t.Fatalf("tokenize = %d %s %v", status, answer, err)
		}
	}
	stop()
	db, err := os.ReadFile(filepath.Join(good, "vault.db"))
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.NativeEndian.Uint32(db[16+8:]))
	// The freelist page named by the newer meta page.
	freelist := func(b []byte) int {
		m0, m1 := b[16:], b[pageSize+16:]
		m := m0
		if binary.NativeEndian.Uint64(m1[48:]) > binary.NativeEndian.Uint64(m0[48:]) {
			m = m1
		}
		return int(binary.NativeEndian.Uint64(m[32:]))
	}
	pages := len(db) / pageSize
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"meta pages zeroed", func(b []byte) []byte {
			clear(b[:2*pageSize])
			return b
		}},
		{"random bytes in the middle", func(b []byte) []byte {
			for p := 2; p < pages; p += 3 {
				copy(b[p*pageSize:], random(pageSize))
			}
			return b
		}},
		{"freelist page overwritten", func(b []byte) []byte {
			copy(b[freelist(b)*pageSize:], random(pageSize))
			return b
		}},
		{"freelist page zeroed", func(b []byte) []byte {
			clear(b[freelist(b)*pageSize : (freelist(b)+1)*pageSize])
			return b
		}},
		{"cut short", func(b []byte) []byte { return b[:len(b)/3] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"master.key", "operator.key"} {
				b, err := os.ReadFile(filepath.Join(good, name))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, name), b, 0o600)
			}
			path := filepath.Join(dir, "vault.db")
			if err := os.WriteFile(path, tc.damage(bytes.Clone(db)), 0o600); err != nil {
				t.Fatal(err)
			}
			// The damage is written (random shares one generator, so it
			// runs in order); the children, each on its own directory,
			// run beside the other cases'.
			t.Parallel()
			code, out := runChild(t, "-addr", "127.0.0.1:0", "-data", dir)
			t.Logf("serve on a damaged store: exit %d\n%s", code, out)
			if code != 1 {
				t.Errorf("serve on a damaged store exited %d, want 1:\n%s", code, out)
			}
			for _, want := range []string{path, "tokenvault restore", "backup"} {
				if !strings.Contains(out, want) {
					t.Errorf("serve on a damaged store does not say %q:\n%s", want, out)
				}
			}
			for _, bad := range []string{"panic", "goroutine "} {
				if strings.Contains(out, bad) {
					t.Errorf("serve on a damaged store writes %q:\n%s", bad, out)
				}
			}
			// The same file as a backup: restore refuses it, as cleanly.
			code, out = runChild(t, "restore", "-i", path, "-data", filepath.Join(t.TempDir(), "restored"), "-master-key-file", filepath.Join(dir, "master.key"))
			if code != 1 || !strings.Contains(out, path) || strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
				t.Errorf("restore of a damaged backup = %d, want 1 naming the file without a panic:\n%s", code, out)
			}
		})
	}
}

// TestCLIChild runs the command with the arguments after "--" when
// TOKENVAULT_CLI_CHILD is set, and exits with its code: runChild's child.
func TestCLIChild(t *testing.T) {
	if os.Getenv("TOKENVAULT_CLI_CHILD") == "" {
		t.Skip("runs only as runChild's child process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(cli(context.Background(), args, func(string) string { return "" }, os.Stdout, os.Stderr))
}

// runChild runs the command in a child process (this test binary, as
// TestCLIChild) and returns its exit code and its output, stdout and
// stderr together.
func runChild(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestCLIChild$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "TOKENVAULT_CLI_CHILD=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the command did not end within a minute:\n%s", out)
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestMissingMasterKeyFileIsNamed: serve on a data directory whose store
// exists but whose master.key was deleted fails saying the key file is
// missing (not that a key is wrong), and leaves no new key file behind.
func TestMissingMasterKeyFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := start(t, dir, nil)
	stop()
	keyFile := filepath.Join(dir, "master.key")
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, nil, "-addr", "127.0.0.1:0", "-data", dir)
	if code != 1 || !strings.Contains(errOut, "master key file "+keyFile+" is missing") || strings.Contains(errOut, "wrong") {
		t.Errorf("serve without master.key = %d %q, want a failure saying %s is missing, not that the key is wrong", code, errOut, keyFile)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Errorf("serve without master.key left %s: %v", keyFile, err)
	}
}
