package vaulttest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestReadmeExamplesAreCompiled: every Go block of the README's "Using it
// from your program" section is an excerpt of the Example function in the
// file the paragraph before it names, so the README shows code that
// compiles and runs.
func TestReadmeExamplesAreCompiled(t *testing.T) {
	root := vaulttest.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "## Using it from your program")
	if start < 0 {
		t.Fatal(`README.md has no "Using it from your program" section`)
	}
	section = section[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	blocks := regexp.MustCompile("(?s)\\(`([^`]+_test\\.go)`\\)[^`]*?```go\\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 3 {
		t.Fatalf("found %d Go blocks after an example file name, want 3 (in-process, mux, client)", len(blocks))
	}
	for _, b := range blocks {
		file, code := b[1], b[2]
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("README names %s: %v", file, err)
			continue
		}
		if !strings.Contains(normalize(string(src)), normalize(code)) {
			t.Errorf("README's block before %s is not an excerpt of it:\n%s", file, code)
		}
	}
}

// normalize drops indentation and blank lines, which excerpts change.
func normalize(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
