package edge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decls are the top-level declarations of one package's non-test files.
type decls struct {
	types map[string]ast.Expr      // type name -> its type expression
	funcs map[string]*ast.FuncDecl // function name (no methods) -> its declaration
}

// parsePackage reads the non-test Go files of dir (relative to the repository root).
func parsePackage(t *testing.T, dir string) decls {
	t.Helper()
	d := decls{types: map[string]ast.Expr{}, funcs: map[string]*ast.FuncDecl{}}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(filepath.Join("..", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("..", dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s/%s: %v", dir, e.Name(), err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						d.types[ts.Name.Name] = ts.Type
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.funcs[decl.Name.Name] = decl
				}
			}
		}
	}
	return d
}

// exprString prints a type expression of the shapes options use: *store.DB, func() time.Time.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.FuncType:
		if len(e.Params.List) == 0 && e.Results != nil && len(e.Results.List) == 1 {
			return "func() " + exprString(e.Results.List[0].Type)
		}
	}
	return ""
}

// optionNames are the one name each common dependency has in every Options struct.
var optionNames = map[string]string{
	"*store.DB":             "DB",
	"*slog.Logger":          "Log",
	"func() time.Time":      "Now",
	"prometheus.Registerer": "Registerer",
	"*cursor.Cursors":       "Cursors",
}

// TestProductsWiredAlike: every product is wired the same way (ARCHITECTURE.md, issue 12):
// NewService(Options) (*Service, error) with its store inside Options; its HTTP type is API,
// made by NewAPI; a product taking a plugin adapter (Options.Plugins) declares its plugin
// errors in errors.go; and across the repository a dependency has one option name in every
// Options struct (the store DB, the logger Log, the clock Now, the metrics Registerer).
func TestProductsWiredAlike(t *testing.T) {
	t.Parallel()
	products, err := os.ReadDir("../products")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range products {
		if !p.IsDir() {
			continue
		}
		n++
		dir := "products/" + p.Name()
		d := parsePackage(t, dir)
		if _, ok := d.types["Product"]; ok {
			t.Errorf("%s declares type Product: a product's HTTP type is API (edge.Product is the interface it implements)", dir)
		}
		if _, ok := d.types["API"]; !ok {
			t.Errorf("%s declares no type API (its HTTP routes)", dir)
		}
		if f := d.funcs["NewAPI"]; f == nil || f.Type.Results == nil || exprString(f.Type.Results.List[0].Type) != "*API" {
			t.Errorf("%s has no func NewAPI(...) *API", dir)
		}
		checkNewService(t, dir, d)
		checkPluginErrors(t, dir, d)
	}
	if n < 5 {
		t.Fatalf("found %d products, want the five", n)
	}
	for _, dir := range []string{"edge/tenancy", "edge/accounts", "edge/webhooks"} {
		checkNewService(t, dir, parsePackage(t, dir))
	}

	checked := 0
	err = filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case "node_modules", "testdata", ".git", "data", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !strings.HasSuffix(ts.Name.Name, "Options") {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			checked++
			for _, field := range st.Fields.List {
				want, ok := optionNames[exprString(field.Type)]
				if !ok {
					continue
				}
				for _, name := range field.Names {
					if name.Name != want {
						t.Errorf("%s: %s.%s is a %s: name it %s, as every Options does", filepath.ToSlash(path), ts.Name.Name, name.Name, exprString(field.Type), want)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d Options structs: is the test running from edge/?", checked)
	}
}

// checkNewService checks func NewService(o Options) (*Service, ...) with a DB field in Options.
func checkNewService(t *testing.T, dir string, d decls) {
	t.Helper()
	f := d.funcs["NewService"]
	if f == nil {
		t.Errorf("%s has no func NewService", dir)
		return
	}
	params := f.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 || exprString(params[0].Type) != "Options" {
		t.Errorf("%s: NewService takes %d parameter groups, want one Options (the store inside it)", dir, len(params))
	}
	if f.Type.Results == nil || exprString(f.Type.Results.List[0].Type) != "*Service" {
		t.Errorf("%s: NewService does not return *Service", dir)
	}
	st, ok := d.types["Options"].(*ast.StructType)
	if !ok {
		t.Errorf("%s declares no Options struct", dir)
		return
	}
	for _, field := range st.Fields.List {
		for _, name := range field.Names {
			if name.Name == "DB" {
				return
			}
		}
	}
	t.Errorf("%s: Options has no DB field (the service's store)", dir)
}

// checkPluginErrors: a product whose Options take a Plugins adapter declares the errors its
// adapter answers with (ErrPluginFailed, ErrPluginBusy) in its errors.go.
func checkPluginErrors(t *testing.T, dir string, d decls) {
	t.Helper()
	st, ok := d.types["Options"].(*ast.StructType)
	if !ok {
		return
	}
	plugins := false
	for _, field := range st.Fields.List {
		for _, name := range field.Names {
			plugins = plugins || name.Name == "Plugins"
		}
	}
	if !plugins {
		return
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", dir, "errors.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("%s takes Options.Plugins but has no errors.go: %v", dir, err)
		return
	}
	declared := map[string]bool{}
	for _, decl := range f.Decls {
		if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, s := range g.Specs {
				for _, name := range s.(*ast.ValueSpec).Names {
					declared[name.Name] = true
				}
			}
		}
	}
	for _, want := range []string{"ErrPluginFailed", "ErrPluginBusy"} {
		if !declared[want] {
			t.Errorf("%s takes Options.Plugins but its errors.go does not declare %s", dir, want)
		}
	}
}
