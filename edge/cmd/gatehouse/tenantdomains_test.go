package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTenantDomainKeys runs the real gateway (plain listen: tenant domains are routed whatever
// tls.mode, a proxy in front may terminate TLS) with the demo tenants, project demo owning an
// api, an embed and an assets domain: each request on a tenant domain reaches only that
// project, and a key of another project answers 403 FORBIDDEN on the API and on the embed page
// alike, a path naming another project or its asset 404 (docs/deploy.md, "Tenant domains"). The gateway's own host is
// unchanged.
func TestTenantDomainKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	demo, err := os.ReadFile("../../../configs/demo.tenants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(demo), "        name: Demo site\n",
		"        name: Demo site\n        domains: [{host: api.customer.test, serves: api}, {host: forms.customer.test, serves: embed}, {host: img.customer.test, serves: assets}]\n", 1)
	docsWeb := "          - {name: web, value: pk_live_docs_web, products: [forms, records, membership]}\n"
	doc = strings.Replace(doc, docsWeb, docsWeb+"          - {name: server, value: sk_live_docs_server, products: [files]}\n", 1)
	tenants := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", filepath.Join(dir, "data"), "--tenants", tenants)
	demoAsset := "/acme/originals/" + uploadAsset(t, p, "sk_live_demo_server") + "/load.png"
	docsAsset := "/acme/originals/" + uploadAsset(t, p, "sk_live_docs_server") + "/load.png"

	const (
		demoKey  = "pk_live_demo_web"
		otherKey = "pk_live_docs_web"      // project docs, same org
		orgKey   = "pk_live_acme_org_only" // the org's key, no project
		unknown  = "pk_live_never_issued"
	)
	records := func(project string) string {
		return "/records/projects/" + project + "/collections/posts/records?limit=1"
	}
	for _, tc := range []struct {
		name, host, path, key string
		status                int
		code                  string // the {"error":...} code; "" for none or a success
		body                  string // what a success holds
	}{
		{"api: own key", "api.customer.test", records("demo"), demoKey, 200, "", `"items":[`},
		{"api: own key, form", "api.customer.test", "/forms/forms/contact", demoKey, 200, "", `"slug":"contact"`},
		{"api: other project's key", "api.customer.test", records("demo"), otherKey, 403, "FORBIDDEN", ""},
		{"api: other project's key, form", "api.customer.test", "/forms/forms/contact", otherKey, 403, "FORBIDDEN", ""},
		{"api: org key", "api.customer.test", records("demo"), orgKey, 403, "FORBIDDEN", ""},
		{"api: other project's id", "api.customer.test", records("docs"), demoKey, 404, "NOT_FOUND", ""},
		{"api: other project's id and key", "api.customer.test", records("docs"), otherKey, 404, "NOT_FOUND", ""},
		{"api: unknown key", "api.customer.test", records("demo"), unknown, 401, "", ""},
		{"api: admin API absent", "api.customer.test", "/admin/v1/projects", "", 404, "NOT_FOUND", ""},
		{"api: metrics absent", "api.customer.test", "/metrics", "", 404, "NOT_FOUND", ""},
		{"api: embed absent", "api.customer.test", "/embed/forms.js", "", 404, "NOT_FOUND", ""},
		{"embed: own key", "forms.customer.test", "/f/contact?key=" + demoKey, "", 200, "", `data-key="pk_live_demo_web"`},
		{"embed: other project's key", "forms.customer.test", "/f/contact?key=" + otherKey, "", 403, "FORBIDDEN", ""},
		{"embed: org key", "forms.customer.test", "/f/contact?key=" + orgKey, "", 400, "API_KEY_REQUIRES_PROJECT_SCOPE", ""},
		{"embed: unknown key", "forms.customer.test", "/f/contact?key=" + unknown, "", 401, "", ""},
		{"embed: malformed key", "forms.customer.test", "/f/contact?key=sk_live_demo_server", "", 400, "VALIDATION_FAILED", ""},
		{"embed: the script", "forms.customer.test", "/forms.js", "", 200, "", "GatehouseFormsBase"},
		{"embed: API absent", "forms.customer.test", records("demo"), demoKey, 404, "NOT_FOUND", ""},
		{"assets: own asset", "img.customer.test", demoAsset, "", 200, "", "PNG"},
		{"assets: other project's asset", "img.customer.test", docsAsset, "", 404, "ASSET_NOT_FOUND", ""},
		{"assets: API absent", "img.customer.test", records("demo"), demoKey, 404, "NOT_FOUND", ""},
		{"own host: any project's asset", "", "/cdn" + docsAsset, "", 200, "", "PNG"},
		{"own host: embed page, any project's key", "", "/embed/f/contact?key=" + otherKey, "", 200, "", `data-key="pk_live_docs_web"`},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.url+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.key != "" {
			req.Header.Set("X-API-Key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if res.StatusCode != tc.status || e.Error != tc.code || !strings.Contains(string(raw), tc.body) {
			t.Errorf("%s: GET %s%s = %d %s, want %d %q %q", tc.name, tc.host, tc.path, res.StatusCode, raw, tc.status, tc.code, tc.body)
		}
	}
}
