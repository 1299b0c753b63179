package cloudkms

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/cli"
)

const transitToken = "hvs.transit-test-token-f00dcafe"

// transitFlags are the flags of -seal transit against f.
func transitFlags(f *fakeTransit, key string) []string {
	return []string{"-seal", "transit", "-transit-address", f.URL, "-transit-key-name", key}
}

// TestTransitServes: a new store under -seal transit bootstraps, serves a
// token, and serves it again after a restart, with no master key on disk;
// a token transit refuses stops the start without a change to the data
// directory and without printing the token.
func TestTransitServes(t *testing.T) {
	f := newFakeTransit(t, transitToken, "transit")
	f.rotate("tokenvault")
	dir := t.TempDir()
	env := map[string]string{"TOKENVAULT_TRANSIT_TOKEN": transitToken}
	addr, out, stop := serve(t, dir, env, transitFlags(f, "tokenvault")...)
	app, id := tokenizeOne(t, addr, dir, "transit value")
	stop()
	if exists(filepath.Join(dir, "master.key")) {
		t.Error("-seal transit wrote master.key")
	}
	if f.requests.Load() == 0 {
		t.Fatal("the server never called transit")
	}
	if strings.Contains(out.String(), transitToken) {
		t.Errorf("the log holds the transit token:\n%s", out)
	}

	// The settings from the environment only, after a rotation of the
	// key in transit: the keyrings wrapped by v1 still open.
	f.rotate("tokenvault")
	readBack(t, dir, map[string]string{"TOKENVAULT_TRANSIT_TOKEN": transitToken, "TOKENVAULT_SEAL": "transit",
		"TOKENVAULT_TRANSIT_ADDRESS": f.URL, "TOKENVAULT_TRANSIT_KEY_NAME": "tokenvault"}, nil, app, id, "transit value")

	// restore takes the same flags to check a backup (here the stopped
	// server's file) and makes a data directory of it, with no master key.
	restored := filepath.Join(t.TempDir(), "restored")
	if code, out, errOut := runCLI(env, append([]string{"restore", "-i", filepath.Join(dir, "vault.db"), "-data", restored}, transitFlags(f, "tokenvault")...)...); code != 0 {
		t.Fatalf("restore -seal transit = %d\n%s%s", code, out, errOut)
	}
	if exists(filepath.Join(restored, "master.key")) {
		t.Error("restore -seal transit wrote master.key")
	}
	readBack(t, restored, env, transitFlags(f, "tokenvault"), app, id, "transit value")

	before := snapshot(t, dir)
	f.echo.Store(true)
	const wrong = "hvs.wrong-token-0123456789"
	var log syncBuffer
	err := cli.Serve(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-data", dir}, transitFlags(f, "tokenvault")...),
		envFunc(map[string]string{"TOKENVAULT_TRANSIT_TOKEN": wrong}), &log, nil)
	if err == nil || !strings.Contains(err.Error(), "transit") {
		t.Errorf("serve with a token transit denies = %v, want a refusal naming transit", err)
	}
	if err != nil && strings.Contains(err.Error(), wrong) || strings.Contains(log.String(), wrong) {
		t.Errorf("the refusal prints the token: %v\n%s", err, log.String())
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a refused start changed the data directory")
	}
	if f.denied.Load() == 0 {
		t.Error("transit was never asked with the wrong token")
	}
}

// TestTransitBindsTheStoreKey: the transit wrapper drops go-kms-wrapping's
// additional data, so the kind wraps it in an envelope: what is wrapped
// for one store key does not unwrap for another, a flipped bit does not
// unwrap, and the key id names the key and its version.
func TestTransitBindsTheStoreKey(t *testing.T) {
	// The wrapper's own variables would override the flags: they are
	// turned off (disallow_env_vars).
	t.Setenv("TRANSIT_WRAPPER_KEY_NAME", "not-this-key")
	t.Setenv("VAULT_TRANSIT_SEAL_MOUNT_PATH", "not-this-mount")
	f := newFakeTransit(t, transitToken, "secret-transit")
	f.namespace = "team-a"
	f.rotate("k")
	fs := cli.NewFlagSet("test", "")
	s := transitKind.flags(fs)
	getenv := envFunc(map[string]string{"TOKENVAULT_TRANSIT_TOKEN": transitToken})
	if err := fs.ParseEnv([]string{"-transit-address", f.URL, "-transit-key-name", "k", "-transit-mount-path", "secret-transit", "-transit-namespace", "team-a"}, getenv); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(getenv); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kw, release, err := s.Open(ctx, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if kw.Kind() != "kms-transit" {
		t.Errorf("Kind() = %q, want kms-transit", kw.Kind())
	}
	secret := []byte("keyring material, 32 bytes long!")
	w, err := kw.Wrap(ctx, secret, []byte("tenant/a/keyring"))
	if err != nil {
		t.Fatal(err)
	}
	if w.KeyID != "k:v1" {
		t.Errorf("KeyID = %q, want k:v1", w.KeyID)
	}
	if bytes.Contains(w.Ciphertext, secret) {
		t.Error("the wrapped key holds the plaintext")
	}
	if got, err := kw.Unwrap(ctx, w, []byte("tenant/a/keyring")); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Unwrap = %q, %v", got, err)
	}
	if _, err := kw.Unwrap(ctx, w, []byte("tenant/b/keyring")); err == nil {
		t.Error("a keyring wrapped for tenant a unwrapped under tenant b's store key")
	}
	for i := 0; i < len(w.Ciphertext)*8; i += 7 {
		c := w
		c.Ciphertext = bytes.Clone(w.Ciphertext)
		c.Ciphertext[i/8] ^= 1 << (i % 8)
		if got, err := kw.Unwrap(ctx, c, []byte("tenant/a/keyring")); err == nil && !bytes.Equal(got, secret) {
			t.Fatalf("bit %d flipped: Unwrap = %q, nil", i, got)
		}
	}
}

// TestRotateLocalToTransitAndBack: rotate-master-key -to transit moves a
// store from master.key into transit (and removes master.key), and -to
// local moves it back (a new master.key); the token reads at every step.
func TestRotateLocalToTransitAndBack(t *testing.T) {
	f := newFakeTransit(t, transitToken, "transit")
	f.rotate("tokenvault")
	dir := t.TempDir()
	addr, _, stop := serve(t, dir, nil)
	app, id := tokenizeOne(t, addr, dir, "moving value")
	stop()
	oldKey := snapshot(t, dir)[filepath.Join(dir, "master.key")]

	env := map[string]string{"TOKENVAULT_TRANSIT_TOKEN": transitToken}
	to := []string{"rotate-master-key", "-data", dir, "-to", "transit", "-transit-address", f.URL, "-transit-key-name", "tokenvault"}
	if code, out, errOut := runCLI(env, to...); code != 0 {
		t.Fatalf("rotate-master-key -to transit = %d\n%s%s", code, out, errOut)
	}
	if exists(filepath.Join(dir, "master.key")) {
		t.Error("master.key is left after moving to transit")
	}
	// From transit to transit: the key is rotated in transit, not here.
	if code, _, errOut := runCLI(env, append(to[:len(to):len(to)], "-seal", "transit")...); code == 0 || !strings.Contains(errOut, "rotate the key in the KMS") {
		t.Errorf("rotate-master-key -seal transit -to transit = %d %q, want a refusal pointing to the KMS's own rotation", code, errOut)
	}
	readBack(t, dir, env, transitFlags(f, "tokenvault"), app, id, "moving value")

	back := []string{"rotate-master-key", "-data", dir, "-seal", "transit", "-transit-address", f.URL, "-transit-key-name", "tokenvault", "-to", "local"}
	if code, out, errOut := runCLI(env, back...); code != 0 {
		t.Fatalf("rotate-master-key -seal transit -to local = %d\n%s%s", code, out, errOut)
	}
	newKey := snapshot(t, dir)[filepath.Join(dir, "master.key")]
	if newKey == "" || newKey == oldKey {
		t.Errorf("master.key after -to local: %q, want a new key", newKey)
	}
	readBack(t, dir, nil, nil, app, id, "moving value")
	// Transit no longer opens it: its keyrings are wrapped by master.key.
	readBack(t, dir, nil, []string{"-seal", "local"}, app, id, "moving value")
}
