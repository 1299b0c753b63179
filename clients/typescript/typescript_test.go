// Package typescript_test runs the TypeScript client's own suite
// (clients/typescript/test) against a real Vault served over HTTP, so
// that go test ./clients/... tests the client with the server.
package typescript_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault/internal/clienttest"
)

// TestTypeScriptClient compiles the client with tsc into a temporary
// directory (never into the source tree, which other runs may share),
// copies the suite and the generator beside it, and runs node --test
// over the suite with the server's environment. tsc and node missing
// skip it, or fail it under CI=true.
func TestTypeScriptClient(t *testing.T) {
	tsc := clienttest.Need(t, "tsc")
	node := clienttest.Need(t, "node")
	src, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	srv := clienttest.Start(t)
	srv.Run(t, src, tsc, "-p", src, "--outDir", filepath.Join(out, "dist"))

	// The suite imports ../dist, and its staleness test reads
	// ../scripts and ../src: the source tree's layout, in out.
	for _, dir := range []string{"test", "scripts", "src"} {
		copyDir(t, filepath.Join(src, dir), filepath.Join(out, dir))
	}
	copyFile(t, filepath.Join(src, "package.json"), filepath.Join(out, "package.json"))

	tests, err := filepath.Glob(filepath.Join(out, "test", "*.test.js"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no test files in %s (%v)", filepath.Join(out, "test"), err)
	}
	srv.Run(t, out, node, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			copyDir(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
			continue
		}
		copyFile(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
