package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestRotateMasterKey: tokenvault rotate-master-key replaces master.key and re-wraps
// the store, so the old key no longer opens it and every token still
// reads; a rotation interrupted before or after the store's commit is
// finished by the next start.
func TestRotateMasterKey(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "master.key")
	addr, _, stop := start(t, dir, nil)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("secret value")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	readable := func(t *testing.T, what string) {
		t.Helper()
		addr, _, stop := start(t, dir, nil)
		defer stop()
		if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, "secret value") {
			t.Fatalf("%s: GET /tokens/{id} = %d %s", what, status, body)
		}
	}
	readKey := func(t *testing.T) []byte {
		t.Helper()
		b, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	opens := func(key []byte) error {
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err == nil {
			v.Close()
		}
		return err
	}

	t.Run("rotate", func(t *testing.T) {
		old := readKey(t)
		out := &syncBuffer{}
		var stderr strings.Builder
		if code := cli(context.Background(), []string{"rotate-master-key", "-data", dir}, func(string) string { return "" }, out, &stderr); code != 0 {
			t.Fatalf("tokenvault rotate-master-key = %d: %s", code, stderr.String())
		}
		if !strings.Contains(out.String(), "rotated the master key") {
			t.Errorf("log: %s", out)
		}
		if bytes.Equal(readKey(t), old) {
			t.Fatal("master.key is unchanged")
		}
		if _, err := os.Stat(filepath.Join(dir, pendingKeyFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", pendingKeyFile, err)
		}
		if strings.Contains(out.String(), hex.EncodeToString(readKey(t))) || strings.Contains(out.String(), hex.EncodeToString(old)) {
			t.Error("a master key reached the log")
		}
		if err := opens(old); !errors.Is(err, tokenvault.ErrWrongMasterKey) {
			t.Errorf("opening with the old key: %v, want ErrWrongMasterKey", err)
		}
		readable(t, "after rotating")
	})

	t.Run("interrupted before the store changed", func(t *testing.T) {
		next := writeKey(t, filepath.Join(dir, pendingKeyFile))
		readable(t, "after finishing the rotation")
		if !bytes.Equal(readKey(t), next) {
			t.Error("master.key is not the pending key")
		}
		if err := opens(next); err != nil {
			t.Errorf("opening with the new key: %v", err)
		}
	})

	t.Run("interrupted after the store changed", func(t *testing.T) {
		next := writeKey(t, filepath.Join(dir, pendingKeyFile))
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: readKey(t)}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.RotateMasterKey(context.Background(), next); err != nil {
			t.Fatal(err)
		}
		v.Close()
		readable(t, "after finishing the rotation")
		if !bytes.Equal(readKey(t), next) {
			t.Error("master.key is not the pending key")
		}
	})

	t.Run("key from the environment", func(t *testing.T) {
		env := map[string]string{"TOKENVAULT_MASTER_KEY": hex.EncodeToString(readKey(t))}
		err := rotateMasterKeyCommand(context.Background(), []string{"-data", dir}, func(k string) string { return env[k] }, &syncBuffer{}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "TOKENVAULT_MASTER_KEY") {
			t.Errorf("rotate-master-key = %v, want a refusal naming TOKENVAULT_MASTER_KEY", err)
		}
	})
}

// writeKey writes a new random key file and returns the key.
func writeKey(t *testing.T, path string) []byte {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPendingKeyIsWrittenWhole: the pending key file appears only with a
// whole key in it, 0600, and no temporary file is left.
func TestPendingKeyIsWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	key, err := writePendingKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readPendingKey(dir)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("readPendingKey = %x, %v; want the key written", got, err)
	}
	fi, err := os.Stat(filepath.Join(dir, pendingKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v, want only %s", entries, pendingKeyFile)
	}
}
