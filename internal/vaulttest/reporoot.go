package vaulttest

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot is the module's root directory, found by walking up from the
// test's working directory (its package's) to go.mod: tests of the README,
// the docs and the commands read and build files by their paths from
// there, wherever the test's package lies.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
