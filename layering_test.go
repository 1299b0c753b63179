package tokenvault

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// storeTransactionNames are the names of package store that only the
// barrier (internal/barrier) may use: a transaction, its optional
// interfaces, and what a store does beside transactions.
var storeTransactionNames = map[string]bool{
	"Tx": true, "Generation": true, "Appender": true, "Entry": true,
	"Snapshotter": true, "SingleProcess": true,
}

// TestRootStaysAboveTheBarrier keeps the root package off the store. The
// compiler does most of it (internal/barrier's package doc says how: a
// barrier.Tx does not give out its store.Tx, and keys have unexported
// fields); what it cannot see is refused here, by parsing every non-test
// file of the root: no file names store.Tx, store.Generation or the
// store's other transaction-level interfaces (a type assertion would
// reach past the barrier), and none calls View or Update on anything but
// the Vault's barrier or its unit of work (Options.Store is a store.Store the root still
// holds while it opens one).
func TestRootStaysAboveTheBarrier(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		storeName := importName(f, "github.com/tokenvault/tokenvault/store")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && storeName != "" && x.Name == storeName && storeTransactionNames[n.Sel.Name] {
					t.Errorf("%s: names store.%s; only internal/barrier touches a store transaction", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "View" && sel.Sel.Name != "Update") {
					return true
				}
				if recv, ok := sel.X.(*ast.SelectorExpr); !ok || (recv.Sel.Name != "barrier" && recv.Sel.Name != "work") {
					t.Errorf("%s: calls %s on something other than the Vault's barrier or unit of work; go through v.view or v.update", fset.Position(n.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files: not the root package's directory?", checked)
	}
}

// importName is the name f uses for the package at path, or "" when f
// does not import it.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}
