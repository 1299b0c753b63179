package tokenvault_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// parseAPI parses the non-test Go files of dir.
func parseAPI(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return fset, files
}

// exportedMethods calls fn for every exported method of the type named
// recv declared in files.
func exportedMethods(files []*ast.File, recv string, fn func(*ast.FuncDecl)) {
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == recv {
				fn(fd)
			}
		}
	}
}

// TestCredentialsAreTyped: every exported method of the Vault, and of the
// Go client, that takes a caller's key takes it as a Credential, never as
// a string, so a key and an id cannot be passed in each other's place.
func TestCredentialsAreTyped(t *testing.T) {
	for _, c := range []struct{ dir, recv, credential string }{
		{".", "Vault", "Credential"},
		{"client", "Client", "tokenvault.Credential"},
	} {
		fset, files := parseAPI(t, c.dir)
		n := 0
		exportedMethods(files, c.recv, func(fd *ast.FuncDecl) {
			for _, field := range fd.Type.Params.List {
				for _, name := range field.Names {
					if name.Name != "key" && name.Name != "operatorKey" && name.Name != "apiKey" {
						continue
					}
					n++
					if got := types(field.Type); got != c.credential {
						t.Errorf("%s: %s.%s takes %s as %s, want %s", fset.Position(fd.Pos()), c.recv, fd.Name.Name, name.Name, got, c.credential)
					}
				}
			}
		})
		if n < 40 {
			t.Errorf("%s: found %d key parameters, want the 40 and more of the API", c.dir, n)
		}
	}
}

// types renders a parameter type expression.
func types(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return types(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + types(x.X)
	}
	return "?"
}

// errorKindWords are what a doc comment may name to say which errors a
// function returns: a Kind, a sentinel error, or that it returns none of
// its own.
var errorKindWords = regexp.MustCompile(`\b(Internal|Invalid|Unauthenticated|PermissionDenied|NotFound|Conflict|UnsupportedMediaType|TooLarge|Unprocessable|Unavailable|CodeFailed|BadGateway|RateLimited|StorageFull|Gone|Err[A-Z]\w*)\b|(?i)returns no errors? of its own|never fails`)

// returnsError reports whether fd's last result is an error.
func returnsError(fd *ast.FuncDecl) bool {
	res := fd.Type.Results
	if res == nil || len(res.List) == 0 {
		return false
	}
	id, ok := res.List[len(res.List)-1].Type.(*ast.Ident)
	return ok && id.Name == "error"
}

// TestDocsNameErrorKinds: the doc comment of every exported method of the
// Vault and of every exported function that returns an error names the
// error kinds it returns (or says it returns none of its own), so a
// caller learns from go doc what to handle.
func TestDocsNameErrorKinds(t *testing.T) {
	fset, files := parseAPI(t, ".")
	check := func(fd *ast.FuncDecl, name string) {
		if !returnsError(fd) {
			return
		}
		if fd.Doc == nil || !errorKindWords.MatchString(fd.Doc.Text()) {
			t.Errorf("%s: the doc of %s names no error kind (Invalid, NotFound, ... or an Err variable), nor says it returns none of its own", fset.Position(fd.Pos()), name)
			return
		}
		// Every key can be wrong: a method taking one says so.
		for _, field := range fd.Type.Params.List {
			if types(field.Type) == "Credential" && !strings.Contains(fd.Doc.Text(), "Unauthenticated") {
				t.Errorf("%s: %s takes a Credential, but its doc does not name Unauthenticated", fset.Position(fd.Pos()), name)
			}
		}
	}
	n := 0
	exportedMethods(files, "Vault", func(fd *ast.FuncDecl) { n++; check(fd, "Vault."+fd.Name.Name) })
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
				check(fd, fd.Name.Name)
			}
		}
	}
	if n < 60 {
		t.Errorf("found %d exported Vault methods, want the 60 and more of the API", n)
	}
}
