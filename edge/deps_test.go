package edge_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pkg is one package of the build graph as `go list -deps -json` reports it.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// buildGraph lists every package the module's packages need (tests excluded), by import path.
func buildGraph(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Standard", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.Bytes())
	}
	graph := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		graph[p.ImportPath] = p
	}
	if len(graph) < 100 {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	return graph
}

// pathTo returns an import chain from the package from to a package with prefix target that
// does not pass through a package allowed by via (nil when there is none).
func pathTo(graph map[string]pkg, from, target string, via func(string) bool) []string {
	seen := map[string]bool{}
	var walk func(p string, chain []string) []string
	walk = func(p string, chain []string) []string {
		if seen[p] {
			return nil
		}
		seen[p] = true
		chain = append(chain, p)
		if strings.HasPrefix(p, target) {
			return chain
		}
		for _, im := range graph[p].Imports {
			if via(im) {
				continue // the allowed door: what it uses is its own business
			}
			if c := walk(im, slices.Clone(chain)); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(from, nil)
}

// isModule reports a package of this module (not the PDK's own module, built for guests).
func isModule(p string) bool { return strings.HasPrefix(p, module) }

func under(dirs ...string) func(string) bool {
	return func(p string) bool {
		for _, d := range dirs {
			if p == module+d || strings.HasPrefix(p, module+d+"/") {
				return true
			}
		}
		return false
	}
}

// The dependency rules of docs/architecture.md, checked over the whole build graph (transitive
// imports, not only each file's own), each with the reason it exists. A violation names the
// import chain that breaks it.
func TestTransitiveDependencyRules(t *testing.T) {
	t.Parallel()
	graph := buildGraph(t)
	rules := []struct {
		target  string            // import path prefix a package may reach only through a door
		door    func(string) bool // the packages through which target may be reached
		applies func(string) bool // the packages the rule is checked for
		reason  string
	}{
		{
			target: "github.com/dgraph-io/badger", door: under("edge/store"), applies: isModule,
			reason: "edge/store hides badger behind its own types, so a PostgreSQL-wire backend can replace it and no product depends on badger's API",
		},
		{
			target: "github.com/jackc/pgx", door: under("edge/store"), applies: isModule,
			reason: "the PostgreSQL driver stays behind edge/store's types like badger (edge/store/pgtest, the test servers' launcher, included)",
		},
		{
			target: "github.com/blevesearch/", door: under("index/title"), applies: isModule,
			reason: "title search is one index package; bleve's large dependency tree stays out of everything else",
		},
		{
			target: "github.com/tetratelabs/wazero", door: under("plugins/host", "products/files/codec"), applies: isModule,
			reason: "the Wasm runtime stays behind the host's API (limits, pools, ABI); products reach plugins through adapters they declare. products/files/codec is the second door: its WebP and AVIF encoders run libwebp and libavif on their own private wazero runtime, behind the files product's Encoder interface",
		},
		{
			// The packages below the handler layer: storage, indexes, plugins, configuration and
			// the fiber-free API vocabulary (typed errors, cursors) that services use.
			target: "github.com/gofiber/fiber", door: func(string) bool { return false },
			applies: under("edge/store", "edge/blob", "edge/config", "edge/yamldoc", "edge/ratelimit", "edge/egress",
				"edge/apierr", "edge/cursor", "edge/accounts", "edge/journal", "edge/tenantcache", "edge/secrets", "edge/legacy",
				"index", "plugins"),
			reason: "fiber stays in the handler layer (edge's server and middleware, api*.go files): the packages services build on take plain Go values, so they are tested and benchmarked without HTTP",
		},
		{
			target: "github.com/valyala/fasthttp", door: func(string) bool { return false },
			applies: under("edge/store", "edge/blob", "edge/config", "edge/yamldoc", "edge/ratelimit", "edge/egress",
				"edge/apierr", "edge/cursor", "edge/accounts", "edge/journal", "edge/tenantcache", "edge/secrets", "edge/legacy",
				"index", "plugins"),
			reason: "fasthttp is fiber's engine: the same layer rule",
		},
		{
			target: "github.com/redis/go-redis", door: under("edge/ratelimit/redisrate", "edge/bus", "edge/redistest"),
			applies: func(p string) bool { return isModule(p) && !under("edge/cmd")(p) },
			reason:  "Redis is a deployment choice of many nodes: the shared limiter and the change feed hide it behind ratelimit.Allower and journal.Change, so products and the rest of edge run without it",
		},
		{
			target: "github.com/go-redis/redis_rate", door: under("edge/ratelimit/redisrate"), applies: isModule,
			reason: "the shared GCRA lives in one package behind ratelimit.Allower",
		},
		{
			target: module + "edge/tenancy", door: func(string) bool { return false },
			applies: under("edge/journal", "edge/tenantcache", "edge/secrets", "edge/legacy"),
			reason:  "the packages that left edge/tenancy sit below it: a cache or a listener depends on the change event, a signer on its secret, the old layout's mover on the store, none on the service that applies the tenants document (which imports edge/journal)",
		},
		{
			target: module + "products/", door: func(string) bool { return false },
			applies: func(p string) bool { return isModule(p) && !under("edge/cmd")(p) && !under("products")(p) },
			reason:  "only the composition root (edge/cmd/gatehouse) knows the products; edge, index and plugins serve them without knowing them",
		},
	}
	for _, r := range rules {
		for p := range graph {
			if !r.applies(p) || r.door(p) || strings.HasPrefix(p, r.target) {
				continue
			}
			if chain := pathTo(graph, p, r.target, r.door); chain != nil {
				t.Errorf("%s reaches %s: %s\n\twhy not: %s", strings.TrimPrefix(p, module), r.target, strings.Join(chain, " -> "), r.reason)
			}
		}
	}
	// No product reaches another, even through a package between them.
	for p := range graph {
		if !under("products")(p) {
			continue
		}
		own := module + top2(strings.TrimPrefix(p, module)) + "/"
		for _, im := range graph[p].Imports {
			for q := range graph {
				if under("products")(q) && !strings.HasPrefix(q+"/", own) {
					if chain := pathTo(graph, im, q, func(string) bool { return false }); chain != nil && isModule(im) {
						t.Errorf("%s reaches %s: %s -> %s\n\twhy not: a product owns its data and rules; what two products share moves down into edge/", strings.TrimPrefix(p, module), q, p, strings.Join(chain, " -> "))
					}
				}
			}
		}
	}
}

// Services do not reach fiber: in a product, and in edge's services the products share (tenancy,
// accounts, webhooks, the bus, the plugin registry), only the handler files (api*.go), a
// product's module.go (its Build, which joins the service to its API values and hands them to
// the composition root as edge.Product: it holds no rule) and tests may import a package that
// depends on fiber, with no other exception (the key model lives in the
// fiber-free edge/apikey, the strict JSON reader in edge/strictjson).
func TestServicesDoNotReachFiber(t *testing.T) {
	t.Parallel()
	graph := buildGraph(t)
	services := map[string]bool{"edge/tenancy": true, "edge/accounts": true, "edge/webhooks": true, "edge/bus": true, "edge/pluginreg": true}
	checked := 0
	for _, f := range repoFiles(t) {
		if f.test || !strings.HasPrefix(f.dir, "products/") && !services[f.dir] || strings.HasPrefix(f.name, "api") || strings.Contains(f.dir+"/", "/cmd/") ||
			strings.HasPrefix(f.dir, "products/") && f.name == "module.go" {
			continue
		}
		checked++
		for _, im := range f.imports {
			if strings.HasPrefix(im, "github.com/gofiber/fiber") {
				t.Errorf("%s/%s imports fiber: only the product's api*.go files may", f.dir, f.name)
				continue
			}
			if chain := pathTo(graph, im, "github.com/gofiber/fiber", func(string) bool { return false }); chain != nil {
				t.Errorf("%s/%s reaches fiber: %s\n\twhy not: services take plain Go values and return apierr errors; only handler files use fiber", f.dir, f.name, strings.Join(chain, " -> "))
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d service files, want every product's", checked)
	}
}
