package email_test

import (
	"context"
	"strings"
	"testing"
)

// The dashboard's template routes: list, read, create/replace, preview, delete, and a send
// that uses the edited template at once (the template cache follows the write).
func TestAdminTemplates(t *testing.T) {
	e := start(t, envOptions{outbox: true})
	const base = "/projects/demo/email/templates"
	if r := e.Admin("GET", base, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"slug":"plain"`) || !strings.Contains(string(r.Body), `"slug":"welcome"`) {
		t.Fatalf("GET templates = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", base+"/welcome", nil); r.Status != 200 || r.JSON(t)["subject"] != "Welcome, {{name}}" {
		t.Errorf("GET welcome = %d %s", r.Status, r.Body)
	}
	// A send fills the cache with the old version; the PUT must replace it.
	id := e.send(t, map[string]any{"to": map[string]string{"email": "ann@example.test"}, "templateId": "plain", "variables": map[string]any{"name": "Ann"}})
	if m, _ := e.svc.Get(context.Background(), id); m.Subject != "Plain Ann" {
		t.Fatalf("first send subject = %q", m.Subject)
	}
	if r := e.Admin("PUT", base+"/plain", map[string]string{"subject": "Edited {{name}}", "body": "Bonjour {{name}}"}); r.Status != 200 {
		t.Fatalf("PUT plain = %d %s", r.Status, r.Body)
	}
	id = e.send(t, map[string]any{"to": map[string]string{"email": "ann@example.test"}, "templateId": "plain", "variables": map[string]any{"name": "Ann"}})
	if m, _ := e.svc.Get(context.Background(), id); m.Subject != "Edited Ann" || m.Text != "Bonjour Ann" {
		t.Errorf("send after PUT: subject %q text %q, want the edited template", m.Subject, m.Text)
	}
	if r := e.Admin("PUT", base+"/receipt", map[string]string{"subject": "Receipt {{n}}", "body": "<p>Total: {{total}}</p>"}); r.Status != 201 {
		t.Fatalf("PUT new template = %d %s", r.Status, r.Body)
	}
	r := e.Admin("POST", base+"/receipt/preview", map[string]any{"variables": map[string]any{"n": 7, "total": "<b>5 €</b>"}})
	p := r.JSON(t)
	if r.Status != 200 || p["subject"] != "Receipt 7" || p["html"] != "<p>Total: &lt;b&gt;5 €&lt;/b&gt;</p>" || p["text"] != "Total: <b>5 €</b>" {
		t.Errorf("preview = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("POST", base+"/plain/preview", map[string]any{"variables": map[string]any{"name": "Bo"}}); r.JSON(t)["html"] != "" || r.JSON(t)["text"] != "Bonjour Bo" {
		t.Errorf("text preview = %s", r.Body)
	}
	if r := e.Admin("POST", base+"/receipt/preview", map[string]any{"variables": map[string]any{}}); r.Status != 400 || !strings.Contains(string(r.Body), "variables.total") {
		t.Errorf("preview without variables = %d %s, want 400 naming variables.total", r.Status, r.Body)
	}
	if r := e.Admin("DELETE", base+"/receipt", nil); r.Status != 204 {
		t.Errorf("DELETE = %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ method, path string }{{"GET", base + "/receipt"}, {"DELETE", base + "/receipt"}, {"POST", base + "/receipt/preview"}} {
		if r := e.Admin(tc.method, tc.path, map[string]any{}); r.Status != 404 || r.Code() != "TEMPLATE_NOT_FOUND" {
			t.Errorf("%s %s after delete = %d %s, want 404 TEMPLATE_NOT_FOUND", tc.method, tc.path, r.Status, r.Body)
		}
	}
	if r := e.Admin("GET", "/projects/nope/email/templates", nil); r.Status != 404 {
		t.Errorf("unknown project = %d, want 404", r.Status)
	}
}

func TestAdminTemplatesHostileInput(t *testing.T) {
	e := start(t, envOptions{outbox: true})
	const base = "/admin/v1/projects/demo/email/templates"
	auth := []string{"Authorization", "Bearer test-admin-token"}
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
	}{
		{"duplicate keys", "PUT", base + "/x", `{"subject":"a","subject":"b","body":"c"}`, nil, 400},
		{"unknown field", "PUT", base + "/x", `{"subject":"a","body":"b","html":"c"}`, nil, 400},
		{"invalid UTF-8", "PUT", base + "/x", "{\"subject\":\"a\xff\",\"body\":\"b\"}", nil, 400},
		{"no body field", "PUT", base + "/x", `{"subject":"a"}`, nil, 400},
		{"two-line subject", "PUT", base + "/x", `{"subject":"a\r\nBcc: x@y.z","body":"b"}`, nil, 400},
		{"bad slug", "PUT", base + "/Bad.Slug", `{"subject":"a","body":"b"}`, nil, 400},
		{"huge body", "PUT", base + "/x", `{"subject":"a","body":"` + strings.Repeat("b", 300<<10) + `"}`, nil, 400},
		{"array body", "PUT", base + "/x", `[1,2]`, nil, 400},
		{"deep body", "PUT", base + "/x", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), nil, 400},
		{"not JSON", "PUT", base + "/x", `subject=a`, []string{"Content-Type", "text/plain"}, 415},
		{"object variable", "POST", base + "/welcome/preview", `{"variables":{"name":{"a":1}}}`, nil, 400},
		{"unknown preview field", "POST", base + "/welcome/preview", `{"vars":{}}`, nil, 400},
	}
	for _, tc := range cases {
		r := e.Do(tc.method, tc.path, tc.body, append(append([]string{}, auth...), tc.headers...)...)
		if r.Status != tc.status {
			t.Errorf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.path, r.Status, r.Body, tc.status)
		}
	}
	if r := e.Admin("GET", "/projects/demo/email/templates/x", nil); r.Status != 404 {
		t.Errorf("a refused PUT stored the template: %d %s", r.Status, r.Body)
	}
	// A member of another org sees none of it: 404 on every template route.
	s := e.User("owner@globex.test", "globex", "owner")
	for _, tc := range []struct{ method, path string }{
		{"GET", "/projects/demo/email/templates"}, {"GET", "/projects/demo/email/templates/welcome"},
		{"PUT", "/projects/demo/email/templates/welcome"}, {"DELETE", "/projects/demo/email/templates/welcome"},
		{"POST", "/projects/demo/email/templates/welcome/preview"},
	} {
		if r := s.Do(tc.method, tc.path, map[string]any{"subject": "x", "body": "y"}); r.Status != 404 || strings.Contains(string(r.Body), "Welcome") {
			t.Errorf("globex owner: %s %s = %d %s, want 404", tc.method, tc.path, r.Status, r.Body)
		}
	}
	if r := e.Admin("GET", "/projects/demo/email/templates/welcome", nil); r.JSON(t)["subject"] != "Welcome, {{name}}" {
		t.Errorf("welcome after the foreign requests: %s", r.Body)
	}
	// acme's own member reaches them.
	m := e.User("member@acme.test", "acme", "member")
	if r := m.Do("GET", "/projects/demo/email/templates/welcome", nil); r.Status != 200 {
		t.Errorf("acme member GET welcome = %d %s", r.Status, r.Body)
	}
}

// The editor previews what is typed: with "template" the preview renders that text, not the
// stored template (which stays as it was), also for a slug that is not saved yet; the text is
// checked as a save checks it.
func TestAdminTemplatePreviewUnsaved(t *testing.T) {
	e := start(t, envOptions{outbox: true})
	const base = "/projects/demo/email/templates"
	vars := map[string]any{"name": "Ada"}
	draft := map[string]any{"subject": "Draft for {{name}}", "body": "<p>Typed, not saved: {{name}}</p>"}
	r := e.Admin("POST", base+"/welcome/preview", map[string]any{"variables": vars, "template": draft})
	if p := r.JSON(t); r.Status != 200 || p["subject"] != "Draft for Ada" || p["html"] != "<p>Typed, not saved: Ada</p>" || p["text"] != "Typed, not saved: Ada" {
		t.Errorf("preview of unsaved text = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", base+"/welcome", nil); r.JSON(t)["subject"] != "Welcome, {{name}}" {
		t.Errorf("the stored template changed by a preview: %s", r.Body)
	}
	r = e.Admin("POST", base+"/not-saved-yet/preview", map[string]any{"variables": vars, "template": map[string]any{"subject": "New {{name}}", "body": "plain {{name}}", "text": "ignored for a text body"}})
	if p := r.JSON(t); r.Status != 200 || p["subject"] != "New Ada" || p["text"] != "plain Ada" || p["html"] != "" {
		t.Errorf("preview of a template not saved yet = %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"missing variable", map[string]any{"variables": map[string]any{}, "template": draft}, "variables.name"},
		{"empty body", map[string]any{"variables": vars, "template": map[string]any{"subject": "x", "body": " "}}, `"body"`},
		{"two-line subject", map[string]any{"variables": vars, "template": map[string]any{"subject": "a\r\nBcc: x@y.z", "body": "b"}}, `"subject"`},
		{"unknown template field", map[string]any{"variables": vars, "template": map[string]any{"subject": "a", "body": "b", "html": "c"}}, "VALIDATION_FAILED"},
	} {
		if r := e.Admin("POST", base+"/welcome/preview", tc.body); r.Status != 400 || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("%s: preview = %d %s, want 400 naming %s", tc.name, r.Status, r.Body, tc.want)
		}
	}
	if r := e.Admin("POST", base+"/Bad.Slug/preview", map[string]any{"variables": vars, "template": draft}); r.Status != 400 {
		t.Errorf("preview under a bad slug = %d %s, want 400", r.Status, r.Body)
	}
}
