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
	types   map[string]ast.Expr      // type name -> its type expression
	funcs   map[string]*ast.FuncDecl // function name (no methods) -> its declaration
	methods map[string]*ast.FuncDecl // "*Service.NewWorker" -> its declaration
}

// parsePackage reads the non-test Go files of dir (relative to the repository root).
func parsePackage(t *testing.T, dir string) decls {
	t.Helper()
	d := decls{types: map[string]ast.Expr{}, funcs: map[string]*ast.FuncDecl{}, methods: map[string]*ast.FuncDecl{}}
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
				} else {
					d.methods[exprString(decl.Recv.List[0].Type)+"."+decl.Name.Name] = decl
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
	"*redis.Client":         "Redis",
	"*tenancy.Service":      "Tenancy",
	"blob.Store":            "Blobs",
	"*egress.Policy":        "Egress",
	"*http.Client":          "Client",
	"*title.Index":          "Titles",
}

// TestProductsWiredAlike: every product has the one module shape (docs/architecture.md, "The
// product module shape"): it exports func Build(ctx context.Context, d module.Deps)
// (module.Module, error), the constructor the composition root calls, and the composition
// root's product list (products() in edge/cmd/gatehouse) names every products/* package's
// Build exactly once, and nothing else; inside, NewService(Options) (*Service, error) with its
// store inside Options (tenancy, accounts and webhooks too); its HTTP type is API, made by
// NewAPI; page cursors are signed in the handlers alone; a product taking a plugin adapter
// (Options.Plugins) declares its plugin errors in errors.go; and across the repository a
// dependency has one option name in every Options struct (the store DB, the logger Log, the
// clock Now, the metrics Registerer, the Redis client Redis, the tenancy service Tenancy, ...:
// optionNames lists them).
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
		checkBuild(t, dir, d)
		checkNewService(t, dir, d)
		checkPluginErrors(t, dir, d)
		checkCursorsInHandlers(t, dir)
	}
	checkCursorsInHandlers(t, "edge/webhooks")
	if n < 5 {
		t.Fatalf("found %d products, want the five", n)
	}
	checkProductList(t, products)
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

// checkBuild checks the module constructor: func Build(context.Context, module.Deps)
// (module.Module, error), a module.Builder.
func checkBuild(t *testing.T, dir string, d decls) {
	t.Helper()
	f := d.funcs["Build"]
	if f == nil {
		t.Errorf("%s has no func Build(ctx context.Context, d module.Deps) (module.Module, error): the product's module constructor", dir)
		return
	}
	if got, want := signature(f.Type), "(context.Context, module.Deps) module.Module, error"; got != want {
		t.Errorf("%s: Build%s, want Build%s (module.Builder)", dir, got, want)
	}
}

// productListFile holds the composition root's list of product modules, func products().
const productListFile = "edge/cmd/gatehouse/wire_products.go"

// checkProductList: the composition root's products() names <product>.Build once for every
// products/* package, and nothing else (a new product is its package and one line there).
func checkProductList(t *testing.T, entries []os.DirEntry) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", productListFile), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkgOf := map[string]string{} // import name -> products/<p>
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		rel, ok := strings.CutPrefix(path, module+"products/")
		if !ok {
			continue
		}
		name := filepath.Base(rel)
		if im.Name != nil {
			name = im.Name.Name
		}
		pkgOf[name] = "products/" + rel
	}
	named := map[string]int{}
	found := false
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != "products" {
			continue
		}
		found = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			for _, e := range lit.Elts {
				sel, _ := e.(*ast.SelectorExpr)
				var x *ast.Ident
				if sel != nil {
					x, _ = sel.X.(*ast.Ident)
				}
				if x == nil || sel.Sel.Name != "Build" || pkgOf[x.Name] == "" {
					t.Errorf("%s: products() lists %s: want <product>.Build of a products/* package", productListFile, exprString(e))
					continue
				}
				named[pkgOf[x.Name]]++
			}
			return false
		})
	}
	if !found {
		t.Fatalf("%s declares no func products() []module.Builder", productListFile)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if dir := "products/" + e.Name(); named[dir] != 1 {
			t.Errorf("%s: products() names %s.Build %d times, want once", productListFile, dir, named[dir])
		}
		delete(named, "products/"+e.Name())
	}
	for dir := range named {
		t.Errorf("%s: products() names %s, which is no products/* package", productListFile, dir)
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
	if r := f.Type.Results; r == nil || len(r.List) != 2 || exprString(r.List[0].Type) != "*Service" || exprString(r.List[1].Type) != "error" {
		t.Errorf("%s: NewService does not return (*Service, error), as every service constructor does", dir)
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

// componentDirs are the packages whose constructors serve wires: the products, edge's
// components and the plugin host.
func componentDirs(t *testing.T) []string {
	t.Helper()
	dirs := []string{"edge/accounts", "edge/admin", "edge/auth", "edge/backup", "edge/blob", "edge/bus",
		"edge/dashboard", "edge/egress", "edge/embedhost", "edge/pluginreg", "edge/ratelimit",
		"edge/ratelimit/redisrate", "edge/tenancy", "edge/webhooks", "plugins/host"}
	products, err := os.ReadDir("../products")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range products {
		if p.IsDir() {
			dirs = append(dirs, "products/"+p.Name())
		}
	}
	return dirs
}

// TestConstructorsTakeOptions: a component's constructor (New, NewService, or New<Part> making
// a part wired by serve, such as admin.NewAccounts or redisrate.NewThrottle, and a service's
// NewWorker or NewSweeper) takes one Options struct, after a context.Context where it
// connects, never a row of positional arguments whose order callers must remember. The HTTP types made by NewAPI over a service are the
// exception: NewAPI(svc, auth, ...) takes the service it serves.
func TestConstructorsTakeOptions(t *testing.T) {
	t.Parallel()
	// Constructors of values, not components, take the one value they wrap (a key, a folder, a
	// cache size); files.NewHost and admin.NewPlugins, like NewAPI, take what they serve.
	values := map[string]bool{"NewSigner": true, "NewVariantSigner": true, "NewSecret": true, "NewKeyValue": true,
		"NewLocal": true, "NewHost": true, "NewPlugins": true}
	checked := 0
	for _, dir := range componentDirs(t) {
		d := parsePackage(t, dir)
		ctors := map[string]*ast.FuncDecl{}
		for name, f := range d.funcs {
			ctors[name] = f
		}
		for name, f := range d.methods {
			if strings.HasPrefix(name, "*Service.") {
				ctors[strings.TrimPrefix(name, "*Service.")] = f
			}
		}
		for name, f := range ctors {
			if !strings.HasPrefix(name, "New") || values[name] || !ast.IsExported(name) {
				continue
			}
			if name == "NewAPI" && !strings.HasPrefix(dir, "edge/backup") {
				continue
			}
			params := f.Type.Params.List
			if len(params) > 0 && exprString(params[0].Type) == "context.Context" {
				params = params[1:]
			}
			checked++
			if len(params) != 1 || len(params[0].Names) > 1 || !strings.HasSuffix(exprString(params[0].Type), "Options") {
				t.Errorf("%s.%s takes positional arguments: give it one Options struct (DB, Log, Now, Registerer, ... as every constructor names them)", dir, name)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("checked %d constructors, want the components' (is the test running from edge/?)", checked)
	}
}

// TestLifecycleSignatures: every component has the one lifecycle (docs/architecture.md, "Lifecycle"):
// Start(ctx) error and Stop(ctx) error for what runs in the background, Close() error for
// what holds resources; serve's assembly calls them through these shapes alone.
func TestLifecycleSignatures(t *testing.T) {
	t.Parallel()
	want := map[string]string{"Start": "(context.Context) error", "Stop": "(context.Context) error", "Close": "() error"}
	checked := 0
	for _, dir := range append(componentDirs(t), "index/title", "edge/store") {
		for method, fd := range parsePackage(t, dir).methods {
			name := fd.Name.Name
			if want[name] == "" || !ast.IsExported(name) {
				continue
			}
			checked++
			if got := signature(fd.Type); got != want[name] {
				t.Errorf("%s: %s%s, want %s%s", dir, method, got, name, want[name])
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d lifecycle methods, want the components'", checked)
	}
}

// signature prints a method's parameter and result types: "(context.Context) error".
func signature(ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) []string {
		var out []string
		if fl == nil {
			return out
		}
		for _, f := range fl.List {
			n := len(f.Names)
			if n == 0 {
				n = 1
			}
			for range n {
				out = append(out, exprString(f.Type))
			}
		}
		return out
	}
	return "(" + strings.Join(list(ft.Params), ", ") + ") " + strings.Join(list(ft.Results), ", ")
}

// checkCursorsInHandlers: page cursors are signed and checked in one layer, the handlers
// (docs/architecture.md: api.go decodes, calls the service, encodes). A service takes the position
// a checked cursor carries and returns the next one as plain bytes; only api*.go files import
// edge/cursor, and NewAPI, not the service's Options, takes the signer.
func checkCursorsInHandlers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "api") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/gatehouse-dev/gatehouse/edge/cursor"` {
				t.Errorf("%s/%s imports edge/cursor: cursors are signed in the handlers (api.go), the service takes and returns positions", dir, name)
			}
		}
	}
}
