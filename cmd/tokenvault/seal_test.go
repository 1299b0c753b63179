package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/keywrap/pkcs11/softhsmtest"
)

// snapshot returns every file under dir with its contents (nil: dir does
// not exist).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// pkcs11Flags are the flags of -seal pkcs11 on tok with the key label.
func pkcs11Flags(tok *softhsmtest.Token, keyLabel string) []string {
	return []string{"-pkcs11-lib", tok.Module, "-pkcs11-token-label", tok.Label, "-pkcs11-key-label", keyLabel}
}

// readToken starts the server on dir with flags and reads the token id
// with app, which must hold value.
func readToken(t *testing.T, dir string, env map[string]string, flags []string, app, id, value string) {
	t.Helper()
	addr, _, stop := startWith(t, dir, env, flags...)
	defer stop()
	if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, value) {
		t.Fatalf("GET /tokens/{id} with %v = %d %s", flags, status, body)
	}
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
			err := run(context.Background(), args, func(k string) string { return tc.env[k] }, out, nil)
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
		if err := run(context.Background(), args, func(k string) string { return env[k] }, &syncBuffer{}, nil); err == nil || !strings.Contains(err.Error(), "does not open") {
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

func TestSealFlags(t *testing.T) {
	var help strings.Builder
	if _, err := parseConfigTo([]string{"-h"}, func(string) string { return "" }, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"-seal", "TOKENVAULT_SEAL", "-pkcs11-lib", "TOKENVAULT_PKCS11_LIB", "-pkcs11-token-label", "-pkcs11-key-label",
		"-pkcs11-pin-file", "TOKENVAULT_PKCS11_PIN_FILE", "TOKENVAULT_PKCS11_PIN\n"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("-h does not mention %q", want)
		}
	}
	if strings.Contains(help.String(), "-pkcs11-pin ") {
		t.Error("-h lists a -pkcs11-pin flag: the PIN is never a flag")
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"unknown kind", []string{"-seal", "awskms"}, nil},
		{"pkcs11 without a module", []string{"-seal", "pkcs11", "-pkcs11-token-label", "t", "-pkcs11-key-label", "k"}, map[string]string{"TOKENVAULT_PKCS11_PIN": "1"}},
		{"pkcs11 without a PIN", []string{"-seal", "pkcs11", "-pkcs11-lib", "/x.so", "-pkcs11-token-label", "t", "-pkcs11-key-label", "k"}, nil},
		{"pkcs11 with two PINs", []string{"-seal", "pkcs11", "-pkcs11-lib", "/x.so", "-pkcs11-token-label", "t", "-pkcs11-key-label", "k", "-pkcs11-pin-file", "/p"}, map[string]string{"TOKENVAULT_PKCS11_PIN": "1"}},
		{"pkcs11 and a master key in the environment", []string{"-seal", "pkcs11", "-pkcs11-lib", "/x.so", "-pkcs11-token-label", "t", "-pkcs11-key-label", "k"}, map[string]string{"TOKENVAULT_PKCS11_PIN": "1", "TOKENVAULT_MASTER_KEY": strings.Repeat("ab", 32)}},
		{"kms-aead without a key file", []string{"-seal", "kms-aead"}, nil},
		{"pkcs11 flags with -seal local", []string{"-pkcs11-lib", "/x.so"}, nil},
	} {
		if _, err := parseConfigTo(tc.args, env(tc.env), &strings.Builder{}); err == nil {
			t.Errorf("%s: parseConfig(%v) succeeded", tc.name, tc.args)
		}
	}
	c, err := parseConfigTo([]string{"-pkcs11-token-label", "t"}, env(map[string]string{"TOKENVAULT_SEAL": "pkcs11", "TOKENVAULT_PKCS11_LIB": "/x.so", "TOKENVAULT_PKCS11_KEY_LABEL": "k", "TOKENVAULT_PKCS11_PIN_FILE": "/p"}), &strings.Builder{})
	if err != nil || c.seal != "pkcs11" || c.pkcs11Lib != "/x.so" || c.pkcs11KeyLabel != "k" || c.pkcs11TokenLabel != "t" || c.pkcs11PinFile != "/p" {
		t.Errorf("from the environment: %+v, %v", c, err)
	}
}

// TestSealKMSAEAD: the go-kms-wrapping adapter through the server: a store
// moved from master.key to -seal kms-aead serves its tokens, and a wrong
// AEAD key refuses to start.
func TestSealKMSAEAD(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("kms value")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	keys := t.TempDir()
	keyFile, wrongFile := filepath.Join(keys, "aead.key"), filepath.Join(keys, "wrong.key")
	writeKey(t, keyFile)
	writeKey(t, wrongFile)
	var stderr strings.Builder
	if code := cli(context.Background(), []string{"rotate-master-key", "-data", dir, "-to", "kms-aead", "-to-kms-aead-key-file", keyFile},
		func(string) string { return "" }, &syncBuffer{}, &stderr); code != 0 {
		t.Fatalf("rotate-master-key -to kms-aead = %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("master.key after moving to kms-aead: %v, want it removed", err)
	}
	readToken(t, dir, nil, []string{"-seal", "kms-aead", "-kms-aead-key-file", keyFile}, app, id, "kms value")
	before := snapshot(t, dir)
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", dir, "-seal", "kms-aead", "-kms-aead-key-file", wrongFile}, func(string) string { return "" }, &syncBuffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "kms-aead") {
		t.Errorf("run with another AEAD key = %v, want a refusal naming kms-aead", err)
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a refused start changed the data directory")
	}
}
