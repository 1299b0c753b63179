// Package softhsmtest gives tests a SoftHSM2 token of their own: a token
// directory and configuration in a temporary directory, so that tests
// never touch a shared token. Tests skip when SoftHSM2 is not installed
// (Debian package softhsm2; .ci/run installs it).
package softhsmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Module is where Debian installs SoftHSM2's PKCS#11 module.
const Module = "/usr/lib/softhsm/libsofthsm2.so"

// Token is a SoftHSM2 token made for one test.
type Token struct {
	Module string
	Label  string
	PIN    string
	// Conf is the SoftHSM2 configuration file; SOFTHSM2_CONF names it for
	// the rest of the test (and its subprocesses).
	Conf string
}

// New initialises a token labelled label, with its own token directory in
// t.TempDir(), and points SOFTHSM2_CONF at its configuration for the rest
// of the test (so the test cannot run in parallel with others). It skips
// the test when SoftHSM2 is not installed. Every PKCS#11 context opened in
// the test must be closed by its end: the module reads SOFTHSM2_CONF when
// it is first loaded.
func New(t testing.TB, label string) *Token {
	t.Helper()
	if _, err := os.Stat(Module); err != nil {
		t.Skipf("SoftHSM2 is not installed (%s: %v); apt-get install softhsm2", Module, err)
	}
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		t.Skipf("softhsm2-util not found: %v", err)
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "softhsm2.conf")
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+tokens+"\nobjectstore.backend = file\nlog.level = ERROR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	tok := &Token{Module: Module, Label: label, PIN: "1234-user", Conf: conf}
	AddToken(t, label, tok.PIN)
	return tok
}

// AddToken initialises another token labelled label with the user PIN
// pin, in the token directory of the configuration SOFTHSM2_CONF names.
func AddToken(t testing.TB, label, pin string) {
	t.Helper()
	cmd := exec.Command("softhsm2-util", "--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", "5678-so")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("softhsm2-util --init-token: %v\n%s", err, out)
	}
}
