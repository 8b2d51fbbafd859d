package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// jsonRoute is one route of the wired binary that takes a JSON body.
type jsonRoute struct {
	name, method, path string
	header             []string // name/value pairs (key or admin token)
	badJSONCode        string   // the code of a body that is not strict JSON
}

// TestJSONRoutesRefuseHostileBodies sends every JSON route of the real binary the bodies
// encoding/json alone would take (duplicate keys, trailing data, invalid UTF-8, lone
// surrogates) and other Content-Types: each is refused with the envelope, never accepted.
func TestJSONRoutesRefuseHostileBodies(t *testing.T) {
	t.Parallel()
	p := startDemo(t)
	admin := []string{"Authorization", "Bearer restart-token"}
	secret := []string{"X-API-Key", "sk_live_demo_server"}
	routes := []jsonRoute{
		{"email send", "POST", "/email/notifications/send", secret, "VALIDATION_FAILED"},
		{"files presign", "POST", "/files/upload/presigned", secret, "VALIDATION_FAILED"},
		{"files complete", "POST", "/files/upload/complete", secret, "VALIDATION_FAILED"},
		{"forms submit", "POST", "/forms/forms/contact/submit", []string{"X-API-Key", "pk_live_demo_web"}, "INVALID_JSON"},
		{"admin keys", "POST", "/admin/v1/keys", admin, "VALIDATION_FAILED"},
		{"admin suppressions", "POST", "/admin/v1/orgs/acme/suppressions", admin, "VALIDATION_FAILED"},
		{"admin email events", "POST", "/admin/v1/email/events", admin, "VALIDATION_FAILED"},
		{"admin record put", "PUT", "/admin/v1/projects/demo/collections/posts/records/post-x", admin, "VALIDATION_FAILED"},
		{"admin record post", "POST", "/admin/v1/projects/demo/collections/posts/records", admin, "VALIDATION_FAILED"},
		{"admin apply", "POST", "/admin/v1/apply", admin, "VALIDATION_FAILED"},
	}
	bodies := []struct{ name, body string }{
		{"duplicate key", `{"email":"a@x.test","email":"b@x.test","to":"a@x.test","to":"b@x.test"}`},
		{"nested duplicate key", `{"data":{"email":"a@x.test","email":"b@x.test"},"orgs":[{"slug":"a","slug":"b"}]}`},
		{"trailing value", `{"to":"a@x.test"} {"to":"b@x.test"}`},
		{"trailing garbage", `{"to":"a@x.test"} ]`},
		{"invalid utf-8", "{\"to\":\"a@x.test\",\"subject\":\"\xff\xfe\"}"},
		{"lone surrogate", `{"to":"a@x.test","subject":"\ud800"}`},
		{"empty", ``},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range bodies {
				if rt.name == "admin apply" && b.body == "" {
					continue // an empty YAML document is a document that declares nothing
				}
				status, code, body := p.send(t, rt.method, rt.path, "application/json", b.body, rt.header...)
				if status != 400 || code != rt.badJSONCode {
					t.Errorf("%s %s with %s = %d %s, want 400 %s", rt.method, rt.path, b.name, status, body, rt.badJSONCode)
				}
			}
			for _, ct := range []string{"text/plain", "application/xml", "application/json; charset=iso-8859-1"} {
				if rt.name == "forms submit" && ct == "text/plain" {
					continue // checked below with the form types
				}
				status, code, body := p.send(t, rt.method, rt.path, ct, `{}`, rt.header...)
				if status != 415 || code != "UNSUPPORTED_CONTENT_TYPE" {
					t.Errorf("%s %s as %s = %d %s, want 415 UNSUPPORTED_CONTENT_TYPE", rt.method, rt.path, ct, status, body)
				}
			}
		})
	}
	// Forms keeps its documented form encodings; multipart without a boundary is a 400.
	forms := []string{"X-API-Key", "pk_live_demo_web"}
	if status, _, body := p.send(t, "POST", "/forms/forms/contact/submit", "application/x-www-form-urlencoded", "email=a%40x.test&message=hi", forms...); status != 201 {
		t.Errorf("urlencoded submit = %d %s, want 201", status, body)
	}
	if status, code, body := p.send(t, "POST", "/forms/forms/contact/submit", "text/plain", "email=a@x.test", forms...); status != 415 || code != "UNSUPPORTED_CONTENT_TYPE" {
		t.Errorf("text/plain submit = %d %s, want 415", status, body)
	}
	for _, ct := range []string{"multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary"} {
		if status, code, body := p.send(t, "POST", "/forms/forms/contact/submit", ct, "--x\r\n", forms...); status != 400 || code != "VALIDATION_FAILED" {
			t.Errorf("submit as %q = %d %s, want 400 VALIDATION_FAILED", ct, status, body)
		}
	}
	// The same routes still take a well-formed body, with or without a Content-Type.
	if status, _, body := p.send(t, "POST", "/admin/v1/orgs/acme/suppressions", "", `{"email":"fine@x.test"}`, admin...); status != 201 {
		t.Errorf("suppression without Content-Type = %d %s, want 201", status, body)
	}
	if status, _, body := p.send(t, "POST", "/email/notifications/send", "application/json; charset=utf-8", `{"to":{"email":"a@x.test"},"subject":"Hi","bodyHtml":"<p>Hi</p>"}`, secret...); status != 202 {
		t.Errorf("email send = %d %s, want 202", status, body)
	}
}

// TestAdminNeverEchoesGoTypes: a body of the wrong shape names the field and the JSON type.
func TestAdminNeverEchoesGoTypes(t *testing.T) {
	t.Parallel()
	p := startDemo(t)
	admin := []string{"Authorization", "Bearer restart-token"}
	for _, tc := range []struct{ path, ctype, body, field string }{
		{"/admin/v1/apply", "application/json", `{"orgs":{"slug":"a"}}`, "orgs"},
		{"/admin/v1/apply", "application/json", `["not a document"]`, "document"},
		{"/admin/v1/apply", "application/yaml", "orgs:\n  - slug: a\n    projects: 7\n", "orgs[0].projects"},
		{"/admin/v1/keys", "application/json", `{"org":"acme","products":"email"}`, "products"},
		{"/admin/v1/keys", "application/json", `[]`, "body"},
		{"/admin/v1/orgs/acme/suppressions", "application/json", `{"email":["x"]}`, "email"},
		{"/admin/v1/email/events", "application/json", `{"messageId":7}`, "messageId"},
		{"/admin/v1/projects/demo/collections/posts/records", "application/json", `{"data":"x"}`, "data"},
	} {
		status, code, body := p.send(t, "POST", tc.path, tc.ctype, tc.body, admin...)
		if status != 400 || code != "VALIDATION_FAILED" || !strings.Contains(body, `"field":"`+tc.field+`"`) {
			t.Errorf("POST %s %s = %d %s, want 400 VALIDATION_FAILED naming %s", tc.path, tc.body, status, body, tc.field)
		}
		for _, leak := range []string{"json:", "Go struct", "Go value", "tenancy.", "admin.", "records.", "email.", "unmarshal", "[]string", "main."} {
			if strings.Contains(body, leak) {
				t.Errorf("POST %s %s answer carries %q: %s", tc.path, tc.body, leak, body)
			}
		}
	}
}

// startDemo starts the binary with an empty config and the demo tenants.
func startDemo(t *testing.T) *proc {
	t.Helper()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	return startProc(t, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
}

// send sends one request and returns the status, the envelope's code and the body.
func (p *proc) send(t *testing.T, method, path, ctype, body string, header ...string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error, string(raw)
}
