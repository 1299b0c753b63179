package tokenvault

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/tokenvault/tokenvault"

// aboveTheRoot are the packages under internal/ that use the Vault (the
// server's commands and test helpers): every other internal package is
// below the root, and a feature package among them.
var aboveTheRoot = []string{"internal/cli", "internal/clienttest", "internal/openapitest", "internal/testfake", "internal/vaulttest"}

// unitImports are all the module's packages internal/unit may import: the
// unit of work sits under every feature and imports none (auditchain is
// the format of an audit line, which every feature writes).
var unitImports = []string{"auditchain", "internal/barrier", "store"}

// TestPackagesAreLayered holds the module's packages to the layers of the
// design: no package below the root imports it, directly or through
// another, and the unit of work imports no feature. It parses the import
// lines of every non-test file, so it needs neither the go command nor a
// build.
func TestPackagesAreLayered(t *testing.T) {
	imports := moduleImports(t)
	if len(imports) < 20 {
		t.Fatalf("found %d packages: not the module's root directory?", len(imports))
	}
	reachesRoot := func(pkg string) []string {
		// A path from pkg to the root, or nil.
		seen := map[string]bool{}
		var walk func(p string, path []string) []string
		walk = func(p string, path []string) []string {
			if p == "" {
				return path
			}
			if seen[p] {
				return nil
			}
			seen[p] = true
			for _, q := range imports[p] {
				name := q
				if q == "" {
					name = "(root)"
				}
				if found := walk(q, append(path, name)); found != nil {
					return found
				}
			}
			return nil
		}
		return walk(pkg, []string{pkg})
	}
	for pkg := range imports {
		if !strings.HasPrefix(pkg, "internal/") || slices.Contains(aboveTheRoot, pkg) {
			continue
		}
		if path := reachesRoot(pkg); path != nil {
			t.Errorf("%s imports the root package (%s): a package below the root takes what it needs as arguments or interfaces", pkg, strings.Join(path, " -> "))
		}
	}
	for _, q := range imports["internal/unit"] {
		if !slices.Contains(unitImports, q) {
			t.Errorf("internal/unit imports %s: the unit of work imports no feature; a feature hooks onto it (unit.Hooks, unit.Local)", q)
		}
	}
}

// moduleImports maps each package of the module (by its path in the
// module, "" for the root) to the module's packages its non-test files
// import. Directories of other modules (contrib/cloudkms) and testdata are
// skipped.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == modulePath {
				p = ""
			} else if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				p = rest
			} else {
				continue
			}
			if !slices.Contains(imports[pkg], p) {
				imports[pkg] = append(imports[pkg], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
