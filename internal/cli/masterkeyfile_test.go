package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMasterKeyFile: -master-key-file (a systemd credential, a container
// secret) gives the master key as TOKENVAULT_MASTER_KEY does: no
// <data>/master.key is made, the same key in the variable opens the store,
// another key file does not, and errors name the file, never its content.
func TestMasterKeyFile(t *testing.T) {
	dir, secrets := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(secrets, "master.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startWith(t, dir, nil, "-master-key-file", keyFile)
	if code, _ := get(t, "http://"+addr+"/readyz", ""); code != 200 {
		t.Errorf("/readyz = %d", code)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, "master.key")); err == nil {
		t.Error("master.key written although -master-key-file was given")
	}
	// The same key, through the variable, opens the store.
	_, _, stop = startWith(t, dir, map[string]string{"TOKENVAULT_MASTER_KEY": strings.Repeat("ab", 32)})
	stop()
	// And through TOKENVAULT_MASTER_KEY_FILE.
	_, _, stop = startWith(t, dir, map[string]string{"TOKENVAULT_MASTER_KEY_FILE": keyFile})
	stop()

	runWith := func(env map[string]string, flags ...string) error {
		args := append([]string{"-addr", "127.0.0.1:0", "-data", dir}, flags...)
		return run(context.Background(), args, func(k string) string { return env[k] }, io.Discard, io.Discard, nil)
	}
	wrong := filepath.Join(secrets, "wrong.key")
	os.WriteFile(wrong, []byte(strings.Repeat("cd", 32)), 0o600)
	if err := runWith(nil, "-master-key-file", wrong); err == nil || !strings.Contains(err.Error(), "master key") || strings.Contains(err.Error(), "cdcd") {
		t.Errorf("run with another key file = %v, want the wrong master key, without the key", err)
	}
	bad := filepath.Join(secrets, "bad.key")
	os.WriteFile(bad, []byte("not-hex-secret"), 0o600)
	if err := runWith(nil, "-master-key-file", bad); err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "not-hex-secret") {
		t.Errorf("run with a malformed key file = %v, want an error naming the file, not its content", err)
	}
	if err := runWith(nil, "-master-key-file", filepath.Join(secrets, "missing")); err == nil || !strings.Contains(err.Error(), "-master-key-file") {
		t.Errorf("run with a missing key file = %v", err)
	}
	if err := runWith(map[string]string{"TOKENVAULT_MASTER_KEY": strings.Repeat("ab", 32)}, "-master-key-file", keyFile); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("run with both the variable and the file = %v", err)
	}
	if err := runWith(nil, "-master-key-file", keyFile, "-seal", "kms-aead", "-kms-aead-key-file", keyFile); err == nil || !strings.Contains(err.Error(), "-seal local") {
		t.Errorf("run with -master-key-file and -seal kms-aead = %v", err)
	}
}
