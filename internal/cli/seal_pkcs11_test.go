//go:build cgo

package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/pkcs11/softhsmtest"
)

func hexKey(k []byte) string { return hex.EncodeToString(k) }

// pkcs11Flags are the flags of -seal pkcs11 on tok with the key label.
func pkcs11Flags(tok *softhsmtest.Token, keyLabel string) []string {
	return []string{"-pkcs11-lib", tok.Module, "-pkcs11-token-label", tok.Label, "-pkcs11-key-label", keyLabel}
}

// TestSealPKCS11: the server keeps its root key in a SoftHSM2 token: no
// master key file is written, tokens read after a restart, and a wrong
// token label, PIN or key label stops it before anything is written.
func TestSealPKCS11(t *testing.T) {
	tok := softhsmtest.New(t, "tv-server")
	dir := t.TempDir()
	env := map[string]string{"TOKENVAULT_PKCS11_PIN": tok.PIN}
	flags := append([]string{"-seal", "pkcs11"}, pkcs11Flags(tok, "vault-root")...)
	addr, _, stop := startWith(t, dir, env, flags...)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("in the hsm")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-seal pkcs11 left a master.key: %v", err)
	}
	readToken(t, dir, env, flags, app, id, "in the hsm")

	// The PIN from a file works as well as from the environment.
	pinFile := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pinFile, []byte(tok.PIN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readToken(t, dir, nil, append(flags, "-pkcs11-pin-file", pinFile), app, id, "in the hsm")

	// A copy of the store restores with the same -seal flags (and not
	// with another key), and serves; no master key appears.
	b, err := os.ReadFile(filepath.Join(dir, "vault.db"))
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(backup, b, 0o600); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	getenv := func(k string) string { return env[k] }
	wrongKey := append([]string{"restore", "-i", backup, "-data", restored, "-seal", "pkcs11"}, pkcs11Flags(tok, "another-key")...)
	if code := cli(context.Background(), wrongKey, getenv, &syncBuffer{}, &strings.Builder{}); code == 0 {
		t.Error("restore with another key label succeeded")
	}
	var stderr strings.Builder
	if code := cli(context.Background(), append([]string{"restore", "-i", backup, "-data", restored}, flags...), getenv, &syncBuffer{}, &stderr); code != 0 {
		t.Fatalf("restore -seal pkcs11 = %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(restored, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("restore -seal pkcs11 wrote a master.key: %v", err)
	}
	readToken(t, restored, env, flags, app, id, "in the hsm")

	fresh := filepath.Join(t.TempDir(), "fresh")
	for _, tc := range []struct {
		name  string
		dir   string
		env   map[string]string
		flags []string
		want  string
	}{
		{"wrong token label", dir, env, []string{"-seal", "pkcs11", "-pkcs11-lib", tok.Module, "-pkcs11-token-label", "no-such-token", "-pkcs11-key-label", "vault-root"}, "no-such-token"},
		{"wrong PIN", dir, map[string]string{"TOKENVAULT_PKCS11_PIN": "0000-wrong"}, flags, "pkcs11"},
		{"wrong key label", dir, env, append([]string{"-seal", "pkcs11"}, pkcs11Flags(tok, "another-key")...), "does not open"},
		{"no -seal (local)", dir, env, nil, "-seal"},
		{"wrong PIN, new data directory", fresh, map[string]string{"TOKENVAULT_PKCS11_PIN": "0000-wrong"}, flags, "pkcs11"},
		{"no PIN", dir, nil, flags, "TOKENVAULT_PKCS11_PIN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, tc.dir)
			out := &syncBuffer{}
			args := append([]string{"-addr", "127.0.0.1:0", "-data", tc.dir}, tc.flags...)
			err := run(context.Background(), args, func(k string) string { return tc.env[k] }, out, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run = %v, want an error about %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), tok.PIN) || strings.Contains(out.String(), tok.PIN) || strings.Contains(err.Error(), "0000-wrong")) {
				t.Errorf("the PIN reached the error or log: %v\n%s", err, out)
			}
			if after := snapshot(t, tc.dir); !sameFiles(before, after) {
				t.Errorf("the data directory changed:\nbefore %d files, after %d", len(before), len(after))
			}
		})
	}
}

// TestRotateToPKCS11AndBack: rotate-master-key -to pkcs11 moves a store
// from master.key into the token (and removes master.key), -to-pkcs11-key-label
// to a new key of the token, -to local back to a new master.key; every
// token stays readable, and each old root of trust no longer opens it.
func TestRotateToPKCS11AndBack(t *testing.T) {
	tok := softhsmtest.New(t, "tv-rotate")
	dir := t.TempDir()
	env := map[string]string{"TOKENVAULT_PKCS11_PIN": tok.PIN}
	addr, _, stop := start(t, dir, nil)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("moving value")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	oldMaster := snapshot(t, dir)[filepath.Join(dir, "master.key")]

	rotate := func(t *testing.T, args ...string) string {
		t.Helper()
		out := &syncBuffer{}
		var stderr strings.Builder
		if code := cli(context.Background(), append([]string{"rotate-master-key", "-data", dir}, args...), func(k string) string { return env[k] }, out, &stderr); code != 0 {
			t.Fatalf("rotate-master-key %v = %d: %s\n%s", args, code, stderr.String(), out)
		}
		if strings.Contains(out.String(), tok.PIN) || strings.Contains(out.String(), strings.TrimSpace(oldMaster)) {
			t.Error("the PIN or the master key reached the log")
		}
		return out.String()
	}
	refused := func(t *testing.T, flags ...string) {
		t.Helper()
		before := snapshot(t, dir)
		args := append([]string{"-addr", "127.0.0.1:0", "-data", dir}, flags...)
		if err := run(context.Background(), args, func(k string) string { return env[k] }, &syncBuffer{}, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "does not open") {
			t.Errorf("run %v = %v, want a refusal", flags, err)
		}
		if !sameFiles(before, snapshot(t, dir)) {
			t.Errorf("a refused start %v changed the data directory", flags)
		}
	}
	hsm1 := append([]string{"-seal", "pkcs11"}, pkcs11Flags(tok, "root-1")...)
	hsm2 := append([]string{"-seal", "pkcs11"}, pkcs11Flags(tok, "root-2")...)

	out := rotate(t, append([]string{"-to", "pkcs11"}, pkcs11Flags(tok, "root-1")...)...)
	if !strings.Contains(out, "kind=pkcs11") || !strings.Contains(out, "key_id=root-1") {
		t.Errorf("log of the rotation to pkcs11: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("master.key after moving to pkcs11: %v, want it removed", err)
	}
	readToken(t, dir, env, hsm1, app, id, "moving value")
	// Run again (as after a crash between the commit and the removal of
	// master.key): harmless.
	if err := os.WriteFile(filepath.Join(dir, "master.key"), []byte(oldMaster), 0o600); err != nil {
		t.Fatal(err)
	}
	rotate(t, append([]string{"-to", "pkcs11"}, pkcs11Flags(tok, "root-1")...)...)
	if _, err := os.Stat(filepath.Join(dir, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("master.key after the second run: %v, want it removed", err)
	}
	readToken(t, dir, env, hsm1, app, id, "moving value")

	rotate(t, append(hsm1, "-to-pkcs11-key-label", "root-2")...)
	refused(t, hsm1...)
	readToken(t, dir, env, hsm2, app, id, "moving value")

	rotate(t, append(hsm2, "-to", "local")...)
	if _, err := os.Stat(filepath.Join(dir, pendingKeyFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left behind: %v", pendingKeyFile, err)
	}
	if m := snapshot(t, dir)[filepath.Join(dir, "master.key")]; m == "" || m == oldMaster {
		t.Errorf("master.key after moving back to local: %q, want a new key", m)
	}
	refused(t, hsm2...)
	readToken(t, dir, nil, nil, app, id, "moving value")
}

// TestRotateToLocalInterrupted: a move from the HSM back to a local key
// that crashed before the store's commit is finished by running the same
// command again (it reuses master.key.new), and one that crashed after
// the commit by starting with -seal local (master.key.new is the key).
func TestRotateToLocalInterrupted(t *testing.T) {
	tok := softhsmtest.New(t, "tv-interrupt")
	env := map[string]string{"TOKENVAULT_PKCS11_PIN": tok.PIN}
	getenv := func(k string) string { return env[k] }
	hsm := append([]string{"-seal", "pkcs11"}, pkcs11Flags(tok, "root")...)
	setup := func(t *testing.T) (dir, app, id string) {
		t.Helper()
		dir = t.TempDir()
		addr, _, stop := startWith(t, dir, env, hsm...)
		app = createRevealApp(t, addr, readManagementKey(t, dir))
		id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("interrupted")), -1)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("tokenize: %d %s %v", status, answer, err)
		}
		stop()
		return dir, app, id
	}

	t.Run("before the commit", func(t *testing.T) {
		dir, app, id := setup(t)
		pending := writeKey(t, filepath.Join(dir, pendingKeyFile)) // then the crash
		var stderr strings.Builder
		if code := cli(context.Background(), append([]string{"rotate-master-key", "-data", dir, "-to", "local"}, hsm...), getenv, &syncBuffer{}, &stderr); code != 0 {
			t.Fatalf("rotate-master-key -to local, again = %d: %s", code, stderr.String())
		}
		if got := snapshot(t, dir)[filepath.Join(dir, "master.key")]; strings.TrimSpace(got) != hexKey(pending) {
			t.Error("master.key is not the key of master.key.new")
		}
		readToken(t, dir, nil, nil, app, id, "interrupted")
	})

	t.Run("after the commit", func(t *testing.T) {
		dir, app, id := setup(t)
		pending := writeKey(t, filepath.Join(dir, pendingKeyFile))
		// The commit, as the command makes it, then the crash before
		// master.key.new is renamed.
		cfg, err := parseConfigTo(append([]string{"-data", dir}, hsm...), getenv, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		cur, closeCur, err := keyWrapper(context.Background(), sealPKCS11, cfg, getenv, "root", "")
		if err != nil {
			t.Fatal(err)
		}
		defer closeCur()
		next, err := tokenvault.NewLocalKeyWrapper(pending)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{Wrapper: cur}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.RotateKeyWrapper(context.Background(), next); err != nil {
			t.Fatal(err)
		}
		v.Close()
		readToken(t, dir, nil, nil, app, id, "interrupted")
		if got := snapshot(t, dir)[filepath.Join(dir, "master.key")]; strings.TrimSpace(got) != hexKey(pending) {
			t.Error("master.key is not the key of master.key.new")
		}
		if _, err := os.Stat(filepath.Join(dir, pendingKeyFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind: %v", pendingKeyFile, err)
		}
	})
}
