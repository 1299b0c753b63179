package console_test

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestStaticFilesUseNoHTMLSinks reads every file the console serves: no
// HTML parsing of strings (innerHTML and its kin), no eval, no
// localStorage or cookies, no inline script or handler, and nothing
// loaded from another origin (no CDN). Comments are left out of the
// search. The browser test shows the same at run time; this names the
// line.
func TestStaticFilesUseNoHTMLSinks(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new Function|setTimeout\s*\(\s*['"\x60]|localStorage|document\.cookie|(from|import\(|src=|href=|url\(|fetch\()\s*['"\x60]?(https?:)?//|<script>|\son[a-z]+\s*=`)
	comment := regexp.MustCompile(`^\s*(//|/\*|\*)`)
	n := 0
	err := fs.WalkDir(os.DirFS("static"), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile("static/" + path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if comment.MatchString(line) {
				continue
			}
			if m := banned.FindString(line); m != "" {
				t.Errorf("static/%s:%d uses %q: %s", path, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("%d files read", n)
	}
}
