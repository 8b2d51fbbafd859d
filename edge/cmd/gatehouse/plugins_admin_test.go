package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pluginList is the body of GET /admin/v1/projects/{project}/plugins.
type pluginList struct {
	Items []struct {
		Name      string           `json:"name"`
		Hooks     []string         `json:"hooks"`
		Status    string           `json:"status"`
		LastError string           `json:"lastError"`
		Calls     int64            `json:"calls"`
		Errors    map[string]int64 `json:"errors"`
	} `json:"items"`
}

func (p *proc) plugins(t *testing.T, project string) pluginList {
	t.Helper()
	code, body := p.admin(t, "GET", "/projects/"+project+"/plugins", "")
	if code != 200 {
		t.Fatalf("GET plugins of %s = %d %s", project, code, body)
	}
	var l pluginList
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("GET plugins of %s: %v: %s", project, err, body)
	}
	return l
}

// decisions.md 8.5 and 8.2: a module the host refuses is refused by apply and by the upload
// (400 PLUGIN_REFUSED with the reason) and nothing is stored; a plugin whose module is missing
// fails closed under onError: closed; the admin API shows each plugin's status, last error,
// calls and errors, and its log, and never another project's.
func TestPluginRefusalsAndAdminRoutes(t *testing.T) {
	t.Parallel()
	mods := buildExamples(t, "spamguard")
	data := t.TempDir()
	// A WebAssembly module the host refuses: it compiles, but exports no memory and no ABI marker.
	empty := filepath.Join(data, "empty.wasm")
	if err := os.WriteFile(empty, []byte("\x00asm\x01\x00\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	tenants := fmt.Sprintf(`
orgs:
  - slug: acme
    projects:
      - id: plug
        keys:
          - {name: web, value: pk_live_plug_web, products: [forms]}
        forms:
          - {slug: contact, published: true, fields: [{name: message, type: text, required: true}]}
        plugins:
          - {name: gate, module: gate, hooks: [forms.submit], onError: closed, config: {blockedWords: casino}}
  - slug: umbrella
    projects:
      - id: other
        keys:
          - {name: web, value: pk_live_other_web, products: [forms]}
        forms:
          - {slug: contact, published: true, fields: [{name: message, type: text, required: true}]}
        plugins:
          - {name: spam, module: %q, hooks: [forms.submit], config: {blockedWords: casino}}
      - id: rec
        keys:
          - {name: web, value: pk_live_rec_web, products: [records]}
        collections:
          - name: posts
            public: true
            fields: [{name: title, type: text}]
            records: [{id: p1, published: true, data: {title: Hello}}]
        plugins:
          - {name: redact, module: redactor, hooks: [records.read], onError: closed}
`, mods["spamguard"])
	file := filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(file, []byte(tenants), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--tenants", file)
	submit := func(project, message string) (int, string) {
		return do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_"+project+"_web", `{"data":{"message":"`+message+`"}}`)
	}

	// The module named by gate has not been uploaded: gate is refused and fails closed.
	if code, body := submit("plug", "hello"); code != 503 || !strings.Contains(body, "PLUGIN_FAILED") {
		t.Errorf("submit with a missing fail-closed plugin = %d %s, want 503 PLUGIN_FAILED", code, body)
	}
	l := p.plugins(t, "plug")
	if len(l.Items) != 1 || l.Items[0].Name != "gate" || l.Items[0].Status != "refused" ||
		!strings.Contains(l.Items[0].LastError, "not been uploaded") || l.Items[0].Errors["refused"] != 1 || l.Items[0].Calls != 1 {
		t.Errorf("plugins of plug = %+v, want gate refused (not uploaded) with one refused call", l)
	}
	if code, body := p.admin(t, "GET", "/projects/plug/plugins/gate/logs", ""); code != 200 || !strings.Contains(string(body), "plugin refused") {
		t.Errorf("logs of refused gate = %d %s, want the refusal", code, body)
	}

	// A fail-closed records.read plugin whose module is missing fails the read the same way.
	if code, body := do(t, "GET", p.url+"/records/projects/rec/collections/posts/records/p1", "pk_live_rec_web", ""); code != 503 ||
		!strings.Contains(body, "PLUGIN_FAILED") || strings.Contains(body, "Hello") {
		t.Errorf("read with a missing fail-closed records.read plugin = %d %s, want 503 PLUGIN_FAILED", code, body)
	}

	// Uploads the host refuses answer 400 PLUGIN_REFUSED with the reason and are not stored.
	if code, body := p.admin(t, "POST", "/plugins?project=plug&name=gate", "\x00asm\x01\x00\x00\x00"); code != 400 ||
		!strings.Contains(string(body), `"error":"PLUGIN_REFUSED"`) || !strings.Contains(string(body), "no memory") {
		t.Errorf("upload of a module without memory = %d %s, want 400 PLUGIN_REFUSED naming the reason", code, body)
	}
	if l := p.plugins(t, "plug"); l.Items[0].Status != "refused" {
		t.Errorf("after a refused upload gate = %+v, want still refused", l.Items[0])
	}

	// Applies the host refuses answer 400 PLUGIN_REFUSED naming the plugin, and change nothing.
	for name, plugin := range map[string]string{
		"module without memory":   fmt.Sprintf(`{name: bad, module: %q, hooks: [forms.submit]}`, empty),
		"memory over the ceiling": fmt.Sprintf(`{name: bad, module: %q, hooks: [forms.submit], limits: {memoryMB: 512}}`, mods["spamguard"]),
		"module path missing":     fmt.Sprintf(`{name: bad, module: %q, hooks: [forms.submit]}`, filepath.Join(data, "nope.wasm")),
		"bad allowHosts":          fmt.Sprintf(`{name: bad, module: %q, hooks: [forms.submit], allowHosts: ["*.com"]}`, mods["spamguard"]),
	} {
		doc := strings.Replace(tenants, "        plugins:\n          - {name: gate", "        plugins:\n          - "+plugin+"\n          - {name: gate", 1)
		code, body := p.admin(t, "POST", "/apply", doc)
		if code != 400 || !strings.Contains(string(body), `"error":"PLUGIN_REFUSED"`) || !strings.Contains(string(body), "orgs[0].projects[0].plugins[0]") {
			t.Errorf("apply with %s = %d %s, want 400 PLUGIN_REFUSED naming plugins[0]", name, code, body)
		}
	}
	if l := p.plugins(t, "plug"); len(l.Items) != 1 {
		t.Errorf("after refused applies plug has %+v, want only gate", l)
	}

	// Uploading a good module under the name brings gate to life, with its config.
	wasm, err := os.ReadFile(mods["spamguard"])
	if err != nil {
		t.Fatal(err)
	}
	if code, body := p.admin(t, "POST", "/plugins?project=plug&name=gate", string(wasm)); code != 201 {
		t.Fatalf("upload spamguard as gate = %d %s", code, body)
	}
	if code, body := submit("plug", "cheap casino"); code != 422 {
		t.Errorf("spam after upload = %d %s, want 422", code, body)
	}
	if code, body := submit("plug", "hello"); code != 201 {
		t.Errorf("clean submission after upload = %d %s, want 201", code, body)
	}
	l = p.plugins(t, "plug")
	if len(l.Items) != 1 || l.Items[0].Status != "running" || l.Items[0].Calls != 2 || len(l.Items[0].Errors) != 0 {
		t.Errorf("plugins of plug after upload = %+v, want gate running, 2 calls, no errors", l)
	}
	if code, body := p.admin(t, "GET", "/projects/plug/plugins/gate/logs?limit=5", ""); code != 200 || !strings.Contains(string(body), `"items":[`) {
		t.Errorf("logs of gate = %d %s, want 200 and a list", code, body)
	}

	// Another tenant's project: its own plugins only, and none of plug's.
	if l := p.plugins(t, "other"); len(l.Items) != 1 || l.Items[0].Name != "spam" || l.Items[0].Status != "running" {
		t.Errorf("plugins of other = %+v, want only spam", l)
	}
	// spam has not failed: lastError and lastErrorAt are there, as null (decisions.md 9.5).
	_, raw := p.admin(t, "GET", "/projects/other/plugins", "")
	var rawList struct{ Items []map[string]json.RawMessage }
	if err := json.Unmarshal(raw, &rawList); err != nil || len(rawList.Items) != 1 {
		t.Fatalf("plugins of other: %v: %s", err, raw)
	}
	for _, k := range []string{"lastError", "lastErrorAt"} {
		if v, ok := rawList.Items[0][k]; !ok || string(v) != "null" {
			t.Errorf("plugins of other: %s = %s (present: %v), want null: %s", k, v, ok, raw)
		}
	}
	for _, path := range []string{"/projects/other/plugins/gate/logs", "/projects/nope/plugins", "/projects/nope/plugins/gate/logs"} {
		if code, body := p.admin(t, "GET", path, ""); code != 404 {
			t.Errorf("GET %s = %d %s, want 404", path, code, body)
		}
	}
	for _, limit := range []string{"0", "1001", "x"} {
		if code, body := p.admin(t, "GET", "/projects/plug/plugins/gate/logs?limit="+limit, ""); code != 400 {
			t.Errorf("logs with limit=%s = %d %s, want 400", limit, code, body)
		}
	}
	p.stop(t)
}
