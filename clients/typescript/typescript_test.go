// Package typescript_test runs the TypeScript client's own suite
// (clients/typescript/test) against a real Vault served over HTTP, so
// that go test ./clients/... tests the client with the server.
package typescript_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

	t.Run("readme", func(t *testing.T) {
		checkExamples(t, srv, tsc, out, map[string]string{
			"README.md":  filepath.Join(src, "README.md"),
			"clients.md": filepath.Join(src, "..", "..", "docs", "clients.md"),
		})
	})
}

var tsBlock = regexp.MustCompile("(?s)```ts\n(.*?)```")

// examplePrelude declares what the documents' examples leave to the
// reader (a key, an id, a cursor).
const examplePrelude = `
import type { CreateTokenBody as ExampleBody } from "@tokenvault/client";
declare const process: { env: Record<string, string | undefined> };
declare const id: string, cursor: string, otherKey: string, proxyKey: string, privateKey: string;
declare const request: ExampleBody;
export {};
`

// checkExamples type-checks the TypeScript blocks of each document, all
// the blocks of one document as one module, against the compiled
// client in out/dist, so an example cannot drift from the client.
func checkExamples(t *testing.T, srv *clienttest.Server, tsc, out string, docs map[string]string) {
	dir := filepath.Join(out, "examples")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for name, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		for _, m := range tsBlock.FindAllSubmatch(b, -1) {
			blocks = append(blocks, string(m[1]))
		}
		if len(blocks) == 0 {
			t.Fatalf("%s has no ts code block", name)
		}
		file := strings.TrimSuffix(name, ".md") + ".ts"
		src := fmt.Sprintf("// The ts blocks of %s.\n%s\n%s", name, strings.Join(blocks, "\n"), examplePrelude)
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	config, err := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"target": "ES2022", "module": "ES2022", "moduleResolution": "node", "lib": []string{"ES2022", "DOM"},
			"strict": true, "noEmit": true, "types": []string{}, "baseUrl": ".",
			"paths": map[string][]string{"@tokenvault/client": {"../dist/index"}},
		},
		"files": files,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Run(t, dir, tsc, "-p", dir)
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
