package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/openapi"
)

// undocumented are the registered routes the OpenAPI document leaves out on purpose, with why.
var undocumented = map[string]string{
	"GET /dashboard/*":              "the dashboard's browser app (HTML, JS, CSS), not an API",
	"GET /docs":                     "the reference page of this document (HTML), not an API",
	"GET /docs/redoc.standalone.js": "the reference page's script",
}

// fiberParam is a fiber path parameter (":id"); the document writes it "{id}".
var fiberParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// documentPath turns a registered fiber path into the document's form: ":id" becomes "{id}",
// and an escaped colon ("records\:import") a plain one.
func documentPath(p string) string {
	const colon = "\x00"
	p = strings.ReplaceAll(p, `\:`, colon)
	p = fiberParam.ReplaceAllString(p, "{$1}")
	return strings.ReplaceAll(p, colon, ":")
}

// The OpenAPI document and the assembled server (wired as serve wires it) describe the same
// routes: every route the server registers is an operation of the document, and every
// operation of the document is a route the server registers. HEAD (fiber's twin of each GET)
// and OPTIONS (the CORS preflights of keyed routes) are not operations; an OPTIONS route must
// sit on a documented path.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	g := startGateway(t, scopeTenants)
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	registered := map[string]bool{}
	for _, r := range g.srv.App().GetRoutes(true) {
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		if _, ok := undocumented[method+" "+r.Path]; ok {
			continue
		}
		path := documentPath(r.Path)
		switch r.Method {
		case http.MethodHead:
			if !documented["GET "+path] {
				t.Errorf("HEAD %s is registered without a documented GET %s", r.Path, path)
			}
			continue
		case http.MethodOptions:
			if _, ok := doc.Paths[path]; !ok {
				t.Errorf("OPTIONS %s (a CORS preflight) is registered on a path the document lacks: %s", r.Path, path)
			}
			continue
		}
		registered[r.Method+" "+path] = true
	}
	var missing, extra []string
	for route := range registered {
		if !documented[route] {
			missing = append(missing, route)
		}
	}
	for route := range documented {
		if !registered[route] {
			extra = append(extra, route)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, route := range missing {
		t.Errorf("route %s is registered but not in edge/openapi/openapi.yaml: document it", route)
	}
	for _, route := range extra {
		t.Errorf("operation %s is in edge/openapi/openapi.yaml but the server registers no such route", route)
	}
	if len(registered) < 70 {
		t.Errorf("walked only %d routes: is the server wired?", len(registered))
	}
	for route := range undocumented {
		found := false
		for _, r := range g.srv.App().GetRoutes(true) {
			found = found || r.Method+" "+r.Path == route
		}
		if !found {
			t.Errorf("undocumented lists %s, which the server does not register", route)
		}
	}
}

func TestDocumentPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/files/assets/:id", "/files/assets/{id}"},
		{`/admin/v1/projects/:project/collections/:collection/records\:import`, "/admin/v1/projects/{project}/collections/{collection}/records:import"},
		{"/healthz", "/healthz"},
	} {
		if got := documentPath(tc.in); got != tc.want {
			t.Errorf("documentPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
