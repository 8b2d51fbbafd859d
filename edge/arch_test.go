package edge_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gatehouse-dev/gatehouse/"

// goFile is one parsed Go file of the repository.
type goFile struct {
	dir, name string // dir relative to the repo root, slash-separated
	imports   []string
	hasDoc    bool
	test      bool
}

func repoFiles(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "data", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Errorf("parse %s: %v", path, err)
			return nil
		}
		rel, _ := filepath.Rel("..", path)
		gf := goFile{dir: filepath.ToSlash(filepath.Dir(rel)), name: filepath.Base(rel), hasDoc: f.Doc != nil, test: strings.HasSuffix(path, "_test.go")}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			gf.imports = append(gf.imports, p)
		}
		out = append(out, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("walked only %d Go files: is the test running from edge/?", len(out))
	}
	return out
}

// Every package has a doc comment a newcomer can act on.
func TestEveryPackageHasDoc(t *testing.T) {
	t.Parallel()
	has := map[string]bool{}
	for _, f := range repoFiles(t) {
		if f.test {
			continue
		}
		if _, ok := has[f.dir]; !ok {
			has[f.dir] = false
		}
		if f.hasDoc {
			has[f.dir] = true
		}
	}
	for dir, ok := range has {
		if !ok {
			t.Errorf("package %s has no package doc comment", dir)
		}
	}
}

// The import rules of docs/architecture.md.
func TestImportRules(t *testing.T) {
	t.Parallel()
	for _, f := range repoFiles(t) {
		for _, im := range f.imports {
			where := f.dir + "/" + f.name
			switch {
			case strings.HasPrefix(im, "github.com/dgraph-io/badger") && f.dir != "edge/store":
				t.Errorf("%s imports badger: only edge/store may", where)
			case strings.HasPrefix(im, "github.com/blevesearch/") && !strings.HasPrefix(f.dir, "index/title"):
				t.Errorf("%s imports bleve: only index/title may", where)
			case strings.HasPrefix(im, "github.com/tetratelabs/wazero") && !strings.HasPrefix(f.dir, "plugins/host") &&
				f.dir != "products/files/codec": // libwebp's module on its own runtime, kept between encodes (webpwasm.go)
				t.Errorf("%s imports wazero: only plugins/host and products/files/codec may", where)
			case strings.HasPrefix(im, "github.com/gofiber/fiber") && !fiberAllowed(f):
				t.Errorf("%s imports fiber: only edge/, products' api*.go files and their cmd/ tools may", where)
			}
			if !strings.HasPrefix(im, module) {
				continue
			}
			target := strings.TrimPrefix(im, module)
			switch {
			case strings.HasPrefix(f.dir, "products/") && strings.HasPrefix(target, "products/") && top2(target) != top2(f.dir):
				t.Errorf("%s imports %s: products never import each other", where, target)
			case strings.HasPrefix(f.dir, "edge") && !strings.HasPrefix(f.dir, "edge/cmd") && !f.test &&
				(strings.HasPrefix(target, "products/") || strings.HasPrefix(target, "plugins/") || strings.HasPrefix(target, "index/")):
				t.Errorf("%s imports %s: edge imports no product, plugin host or index", where, target)
			case strings.HasPrefix(f.dir, "index/") && (strings.HasPrefix(target, "products/") || strings.HasPrefix(target, "plugins/")):
				t.Errorf("%s imports %s: index knows nothing of products", where, target)
			case strings.HasPrefix(f.dir, "plugins/") && (strings.HasPrefix(target, "products/") || strings.HasPrefix(target, "edge") || strings.HasPrefix(target, "index/")):
				t.Errorf("%s imports %s: plugins know nothing of HTTP or products", where, target)
			case strings.HasPrefix(target, "products/") && !strings.HasPrefix(f.dir, "products/") && !strings.HasPrefix(f.dir, "edge/cmd"):
				t.Errorf("%s imports %s: only the composition root imports products", where, target)
			}
		}
	}
}

func fiberAllowed(f goFile) bool {
	if strings.HasPrefix(f.dir, "edge") || f.test {
		return true
	}
	// Load generators under a product's cmd/ measure bare fiber as the ceiling.
	if strings.HasPrefix(f.dir, "products/") && strings.Contains(f.dir+"/", "/cmd/") {
		return true
	}
	return strings.HasPrefix(f.dir, "products/") && strings.HasPrefix(f.name, "api")
}

func top2(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return p
	}
	return parts[0] + "/" + parts[1]
}
