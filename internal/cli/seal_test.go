package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	rotateHelp := &syncBuffer{}
	if code := cli(context.Background(), []string{"rotate-master-key", "-h"}, func(string) string { return "" }, rotateHelp, &strings.Builder{}); code != 0 {
		t.Fatalf("rotate-master-key -h = %d", code)
	}
	for _, want := range []string{"-to ", "TOKENVAULT_ROTATE_TO", "-to-pkcs11-key-label", "-to-kms-aead-key-file", "-seal", "TOKENVAULT_PKCS11_PIN\n"} {
		if !strings.Contains(rotateHelp.String(), want) {
			t.Errorf("rotate-master-key -h does not mention %q", want)
		}
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
	// What a crash during an earlier rotation left: removed by this one.
	leftover := filepath.Join(dir, pendingKeyFile+".tmp99")
	if err := os.WriteFile(leftover, []byte("0a"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldID := localKeyID(readMasterKey(t, filepath.Join(dir, "master.key")))
	var stderr strings.Builder
	log := &syncBuffer{}
	if code := cli(context.Background(), []string{"rotate-master-key", "-data", dir, "-to", "kms-aead", "-to-kms-aead-key-file", keyFile},
		func(string) string { return "" }, log, &stderr); code != 0 {
		t.Fatalf("rotate-master-key -to kms-aead = %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "master.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("master.key after moving to kms-aead: %v, want it removed", err)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is left: %v", leftover, err)
	}
	if !strings.Contains(log.String(), "previous_key_id="+oldID) || !strings.Contains(log.String(), "backups taken before this rotation need that key") {
		t.Errorf("the log does not name the removed key's id %s for older backups:\n%s", oldID, log)
	}
	readToken(t, dir, nil, []string{"-seal", "kms-aead", "-kms-aead-key-file", keyFile}, app, id, "kms value")
	before := snapshot(t, dir)
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", dir, "-seal", "kms-aead", "-kms-aead-key-file", wrongFile}, func(string) string { return "" }, &syncBuffer{}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "kms-aead") {
		t.Errorf("run with another AEAD key = %v, want a refusal naming kms-aead", err)
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a refused start changed the data directory")
	}
}

// TestCloudKindsNameTheirBinary: this tokenvault has no cloud KMS kinds
// (their modules stay out of the main module); asked for one, by -seal or
// rotate-master-key -to, it names the binary that has them.
func TestCloudKindsNameTheirBinary(t *testing.T) {
	for _, kind := range cloudSeals {
		for _, args := range [][]string{
			{"serve", "-data", t.TempDir(), "-seal", kind},
			{"rotate-master-key", "-data", t.TempDir(), "-to", kind},
		} {
			code, _, errOut := runCLI(t, nil, args...)
			if code == 0 || !strings.Contains(errOut, "contrib/cloudkms") || !strings.Contains(errOut, kind) {
				t.Errorf("tokenvault %v = %d %q, want a failure naming %s and contrib/cloudkms", args, code, errOut, kind)
			}
		}
	}
}
