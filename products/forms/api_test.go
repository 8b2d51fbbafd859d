package forms_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

const (
	get    = "/forms/forms/contact"
	submit = "/forms/forms/contact/submit"
)

func TestAuthAndErrorTable(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	ok := map[string]any{"data": map[string]any{"email": "a@example.com", "message": "hi"}}
	e.Run(t, []edgetest.Scenario{
		{Name: "definition", Method: "GET", Path: get, Key: "pk_live_demo_web", Status: 200},
		{Name: "no key", Method: "GET", Path: get, Status: 401, Code: "-"},
		{Name: "bad key", Method: "GET", Path: get, Key: "pk_live_nope_nope", Status: 401, Code: "-"},
		{Name: "malformed key", Method: "POST", Path: submit, Key: "hello", Body: ok, Status: 401, Code: "-"},
		{Name: "revoked key", Method: "POST", Path: submit, Key: "pk_live_demo_revoked", Body: ok, Status: 401, Code: "-"},
		{Name: "org-only key", Method: "GET", Path: get, Key: "pk_live_acme_org_only", Status: 400, Code: "API_KEY_REQUIRES_PROJECT_SCOPE"},
		{Name: "org-only key submit", Method: "POST", Path: submit, Key: "pk_live_acme_org_only", Body: ok, Status: 400, Code: "API_KEY_REQUIRES_PROJECT_SCOPE"},
		{Name: "secret key", Method: "POST", Path: submit, Key: "sk_live_demo_server", Body: ok, Status: 403, Code: "FORBIDDEN"},
		{Name: "key without forms", Method: "GET", Path: get, Key: "pk_live_demo_files", Status: 403, Code: "FORBIDDEN"},
		{Name: "private get", Method: "GET", Path: "/forms/forms/internal", Key: "pk_live_demo_web", Status: 403, Code: "FORM_PRIVATE"},
		{Name: "private submit", Method: "POST", Path: "/forms/forms/internal/submit", Key: "pk_live_demo_web", Body: `{"answer":"x"}`, Status: 403, Code: "FORM_PRIVATE"},
		{Name: "unpublished", Method: "GET", Path: "/forms/forms/draft", Key: "pk_live_demo_web", Status: 404, Code: "FORM_NOT_FOUND"},
		{Name: "unpublished submit", Method: "POST", Path: "/forms/forms/draft/submit", Key: "pk_live_demo_web", Body: `{"answer":"x"}`, Status: 404, Code: "FORM_NOT_FOUND"},
		{Name: "unknown form wins over a broken body", Method: "POST", Path: "/forms/forms/nope/submit", Key: "pk_live_demo_web", Body: `{`, Status: 404, Code: "FORM_NOT_FOUND"},
		{Name: "unknown", Method: "GET", Path: "/forms/forms/nope", Key: "pk_live_demo_web", Status: 404, Code: "FORM_NOT_FOUND"},
		{Name: "other project's form", Method: "GET", Path: get, Key: "pk_live_ts_web", Status: 404, Code: "FORM_NOT_FOUND"},
		{Name: "canonical", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: ok, Status: 201},
		{Name: "flat", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"hi","age":3,"topic":"sales","tags":["a","c"],"agree":true}`, Status: 201},
		{Name: "broken JSON", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":`, Status: 400, Code: "INVALID_JSON"},
		{Name: "empty body", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: ``, Status: 400, Code: "INVALID_JSON"},
		{Name: "trailing data", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{} {}`, Status: 400, Code: "INVALID_JSON"},
		{Name: "array body", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `[1]`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "unknown field", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"hi","extra":1}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "missing required", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"data":{"email":"a@example.com"}}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "wrong type", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"hi","age":"three"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "too long", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"` + strings.Repeat("x", 51) + `"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "bad email", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"nope","message":"hi"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "bad option", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"hi","topic":"x"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "file in JSON", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"a@example.com","message":"hi","photo":"x"}`, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "JSON over 1 MB", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{"email":"` + strings.Repeat("x", 1<<20) + `"}`, Status: 413, Code: "-"},
		{Name: "compressed body", Method: "POST", Path: submit, Key: "pk_live_demo_web", Body: `{}`, Headers: []string{"Content-Encoding", "gzip"}, Status: 415, Code: "UNSUPPORTED_CONTENT_ENCODING"},
		{Name: "captcha not configured", Method: "POST", Path: "/forms/forms/guarded/submit", Key: "pk_live_demo_web", Body: `{"name":"x","captcha-response":"good"}`, Status: 503, Code: "CAPTCHA_NOT_CONFIGURED"},
		{Name: "preflight", Method: "OPTIONS", Path: submit, Status: 204},
	})
}

func TestValidationDetails(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.Do("POST", submit, `{"data":{"message":"`+strings.Repeat("y", 60)+`","age":-1,"zzz":1}}`, "X-API-Key", "pk_live_demo_web")
	var body struct {
		Error   string `json:"error"`
		Details []struct{ Field, Problem string }
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != 400 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	var fields []string
	for _, d := range body.Details {
		fields = append(fields, d.Field)
	}
	if got, want := strings.Join(fields, ","), "email,message,age,zzz"; got != want {
		t.Errorf("details fields = %s, want %s (%s)", got, want, r.Body)
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.Do("GET", get, nil, "X-API-Key", "pk_live_demo_web")
	var d struct {
		Slug     string
		Title    string
		Fields   []map[string]any
		Settings map[string]any
		Captcha  any
	}
	if err := json.Unmarshal(r.Body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Slug != "contact" || d.Title != "Contact us" || len(d.Fields) != 7 || d.Settings["successMessage"] != "Thanks!" || d.Captcha != nil {
		t.Errorf("GET contact = %s", r.Body)
	}
	if d.Fields[0]["required"] != true || d.Fields[2]["required"] != false {
		t.Errorf("fields must always carry required: %s", r.Body)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("publishable route without CORS header")
	}
	r = e.Do("GET", "/forms/forms/guarded", nil, "X-API-Key", "pk_live_ts_web")
	if !strings.Contains(string(r.Body), `"captcha":{"provider":"turnstile","siteKey":"ts-site"}`) || strings.Contains(string(r.Body), "ts-secret") {
		t.Errorf("GET guarded = %s, want the site key and never the secret", r.Body)
	}
}

func TestMultipart(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	tests := []struct {
		name   string
		parts  []part
		status int
		code   string
	}{
		{"with file", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "age", value: "42"}, {name: "tags", value: "a"}, {name: "tags", value: "b"}, {name: "agree", value: "on"}, {name: "photo", filename: "p.png", ctype: "image/png", data: pngBytes}}, 201, ""},
		{"no file", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}}, 201, ""},
		{"empty file input", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "photo", value: ""}}, 201, ""},
		{"type not accepted", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "photo", filename: "a.txt", ctype: "text/plain", data: []byte("hello")}}, 400, "VALIDATION_FAILED"},
		{"type lies", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "photo", filename: "a.png", ctype: "image/png", data: []byte("not a png at all")}}, 400, "VALIDATION_FAILED"},
		{"file on text field", []part{{name: "email", value: "a@example.com"}, {name: "message", filename: "m.png", ctype: "image/png", data: pngBytes}}, 400, "VALIDATION_FAILED"},
		{"bad number", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "age", value: "x"}}, 400, "VALIDATION_FAILED"},
		{"file over 5 MB", []part{{name: "email", value: "a@example.com"}, {name: "message", value: "hi"}, {name: "photo", filename: "big.png", ctype: "image/png", data: append(append([]byte{}, pngBytes...), make([]byte, 5<<20)...)}}, 413, "-"},
		{"body over 10 MB", []part{{name: "email", value: "a@example.com"}, {name: "message", value: strings.Repeat("x", 10<<20)}}, 413, "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, ctype := multipartBody(t, tc.parts...)
			r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
			if r.Status != tc.status || (tc.code == "-" && r.Code() != "") || (tc.code != "-" && r.Code() != tc.code) {
				t.Errorf("multipart %s = %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
			}
		})
	}
	// urlencoded, as a plain HTML form posts
	r := e.Do("POST", submit, strings.NewReader("email=a%40example.com&message=hello&agree=on"), "X-API-Key", "pk_live_demo_web", "Content-Type", "application/x-www-form-urlencoded")
	if r.Status != 201 {
		t.Errorf("urlencoded = %d %s", r.Status, r.Body)
	}
}

func TestInboxAndStoredFields(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	body, ctype := multipartBody(t, part{name: "email", value: "first@example.com"}, part{name: "message", value: "with photo"},
		part{name: "photo", filename: "p.png", ctype: "image/png", data: pngBytes})
	r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype, "User-Agent", "test-agent/1", "X-Forwarded-For", "1.2.3.4, 203.0.113.7")
	if r.Status != 201 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	var receipt struct{ ID, Status string }
	_ = json.Unmarshal(r.Body, &receipt)
	if len(receipt.ID) != 36 || receipt.ID[14] != '7' || receipt.Status != "received" {
		t.Errorf("receipt = %s, want a UUID (v7) and status received", r.Body)
	}
	for i := 0; i < 4; i++ {
		e.clock.Add(time.Second)
		if r := e.Do("POST", submit, map[string]any{"email": "n@example.com", "message": "n", "age": i}, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
			t.Fatalf("submit %d = %d %s", i, r.Status, r.Body)
		}
	}
	type item struct {
		ID, Form, CreatedAt, IP, UserAgent string
		Data                               map[string]any
		Files                              []struct {
			Field, Name, ContentType, URL string
			Size                          int64
		}
	}
	type pageT struct {
		Items      []item
		Pagination struct{ NextCursor *string }
	}
	var all []item
	path := "/projects/demo/forms/contact/submissions?limit=2"
	for n := 0; n < 5; n++ {
		r := e.Admin("GET", path, nil)
		if r.Status != 200 {
			t.Fatalf("inbox = %d %s", r.Status, r.Body)
		}
		var page pageT
		_ = json.Unmarshal(r.Body, &page)
		all = append(all, page.Items...)
		if page.Pagination.NextCursor == nil {
			break
		}
		path = "/projects/demo/forms/contact/submissions?limit=2&cursor=" + *page.Pagination.NextCursor
	}
	if len(all) != 5 {
		t.Fatalf("inbox listed %d submissions, want 5", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID <= all[i].ID {
			t.Errorf("inbox not newest first: %s before %s", all[i-1].ID, all[i].ID)
		}
	}
	first := all[4]
	if first.ID != receipt.ID || first.IP != "203.0.113.7" || first.UserAgent != "test-agent/1" || first.Data["email"] != "first@example.com" ||
		first.CreatedAt != "2026-11-22T12:00:00.000Z" || len(first.Files) != 1 || first.Files[0].Size != int64(len(pngBytes)) {
		t.Fatalf("oldest submission = %+v", first)
	}
	if all[0].Data["age"] != float64(3) {
		t.Errorf("number stored as %v (%T), want 3", all[0].Data["age"], all[0].Data["age"])
	}
	f := e.Do("GET", first.Files[0].URL, nil, "Authorization", "Bearer "+edgetest.AdminToken)
	if f.Status != 200 || string(f.Body) != string(pngBytes) || f.Header.Get("Content-Type") != "image/png" {
		t.Errorf("file link = %d %q", f.Status, f.Header.Get("Content-Type"))
	}
	if r := e.Admin("GET", "/projects/demo/forms/contact/submissions?cursor=forged", nil); r.Status != 400 || r.Code() != "INVALID_CURSOR" {
		t.Errorf("forged cursor = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/projects/demo/forms/other/submissions?cursor="+*firstCursor(t, e), nil); r.Code() != "INVALID_CURSOR" {
		t.Errorf("cursor of another form = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/projects/demo/forms/nope/submissions", nil); r.Status != 404 || r.Code() != "FORM_NOT_FOUND" {
		t.Errorf("inbox of unknown form = %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", "/admin/v1/projects/demo/forms/contact/submissions", nil); r.Status != 401 {
		t.Errorf("inbox without admin token = %d", r.Status)
	}
}

func firstCursor(t *testing.T, e *env) *string {
	r := e.Admin("GET", "/projects/demo/forms/contact/submissions?limit=1", nil)
	var page struct{ Pagination struct{ NextCursor *string } }
	_ = json.Unmarshal(r.Body, &page)
	if page.Pagination.NextCursor == nil {
		t.Fatalf("no cursor: %s", r.Body)
	}
	return page.Pagination.NextCursor
}

func TestUntrustedForwardedFor(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.Do("POST", "/forms/forms/other/submit", `{"note":"x"}`, "X-API-Key", "pk_live_demo_web", "X-Forwarded-For", "203.0.113.7")
	if r.Status != 201 {
		t.Fatalf("submit = %d %s", r.Status, r.Body)
	}
	in := e.Admin("GET", "/projects/demo/forms/other/submissions", nil)
	if !strings.Contains(string(in.Body), `"ip":"127.0.0.1"`) {
		t.Errorf("X-Forwarded-For from an untrusted peer was used: %s", in.Body)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	body := `{"note":"x"}`
	for i := 1; i <= 60; i++ {
		if r := e.Do("POST", "/forms/forms/other/submit", body, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
			t.Fatalf("submission %d = %d %s", i, r.Status, r.Body)
		}
	}
	r := e.Do("POST", "/forms/forms/other/submit", body, "X-API-Key", "pk_live_demo_web")
	if r.Status != 429 || r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("61st submission = %d %s Retry-After %q, want 429 RATE_LIMITED Retry-After 1", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if r := e.Do("POST", "/forms/forms/other/submit", body, "X-API-Key", "pk_live_demo_web2"); r.Status != 201 {
		t.Errorf("another key = %d, want 201", r.Status)
	}
	if r := e.Do("POST", submit, `{"email":"a@example.com","message":"x"}`, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
		t.Errorf("another form = %d, want 201", r.Status)
	}
	e.clock.Add(time.Second)
	if r := e.Do("POST", "/forms/forms/other/submit", body, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
		t.Errorf("after one second = %d, want 201", r.Status)
	}
	if r := e.Do("POST", "/forms/forms/other/submit", body, "X-API-Key", "pk_live_demo_web"); r.Status != 429 {
		t.Errorf("second after one second = %d, want 429", r.Status)
	}
	m := string(e.Do("GET", "/metrics", nil).Body)
	for _, want := range []string{`gatehouse_forms_submissions_total{outcome="RATE_LIMITED"} 2`, `gatehouse_forms_submissions_total{outcome="received"} 63`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestCaptchaProviders(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	for _, p := range []struct{ project, key, alias string }{
		{"ts", "pk_live_ts_web", "cf-turnstile-response"},
		{"hc", "pk_live_hc_web", "h-captcha-response"},
		{"rc", "pk_live_rc_web", "g-recaptcha-response"},
	} {
		t.Run(p.project, func(t *testing.T) {
			path := "/forms/forms/guarded/submit"
			before := len(e.verify.Calls())
			e.Run(t, []edgetest.Scenario{
				{Name: "missing", Method: "POST", Path: path, Key: p.key, Body: `{"name":"x"}`, Status: 400, Code: "CAPTCHA_REQUIRED"},
				{Name: "invalid fields do not burn the token", Method: "POST", Path: path, Key: p.key, Body: `{"nam":"x","captcha-response":"good"}`, Status: 400, Code: "VALIDATION_FAILED"},
			})
			if n := len(e.verify.Calls()); n != before {
				t.Fatalf("siteverify called %d times for invalid submissions", n-before)
			}
			e.Run(t, []edgetest.Scenario{
				{Name: "rejected", Method: "POST", Path: path, Key: p.key, Body: `{"name":"x","captcha-response":"bad"}`, Status: 403, Code: "CAPTCHA_FAILED"},
				{Name: "accepted", Method: "POST", Path: path, Key: p.key, Body: `{"data":{"name":"x"},"captcha-response":"good"}`, Headers: []string{"X-Forwarded-For", "198.51.100.9"}, Status: 201},
				{Name: "provider alias", Method: "POST", Path: path, Key: p.key, Body: `{"name":"x","` + p.alias + `":"good"}`, Status: 201},
				{Name: "token inside data", Method: "POST", Path: path, Key: p.key, Body: `{"data":{"name":"x","captcha-response":"good"}}`, Status: 201},
			})
			body, ctype := multipartBody(t, part{name: "name", value: "x"}, part{name: p.alias, value: "good"})
			if r := e.Do("POST", path, body, "X-API-Key", p.key, "Content-Type", ctype); r.Status != 201 {
				t.Errorf("multipart with %s = %d %s", p.alias, r.Status, r.Body)
			}
			var seen bool
			for _, c := range e.verify.Calls()[before:] {
				if c.provider != p.project[:2] && !strings.HasPrefix(c.provider, map[string]string{"ts": "turnstile", "hc": "hcaptcha", "rc": "recaptcha"}[p.project]) {
					t.Errorf("call went to %s", c.provider)
				}
				if c.secret != p.project+"-secret" {
					t.Errorf("secret sent = %q", c.secret)
				}
				if c.remoteIP == "198.51.100.9" {
					seen = true
				}
				if p.project == "hc" && c.siteKey != "hc-site" {
					t.Errorf("hCaptcha call without sitekey: %+v", c)
				}
			}
			if !seen {
				t.Errorf("no siteverify call carried the client IP")
			}
		})
	}
}

func TestCaptchaProviderDown(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) {})
	e.verify.srv.Close()
	r := e.Do("POST", "/forms/forms/guarded/submit", `{"name":"x","captcha-response":"good"}`, "X-API-Key", "pk_live_ts_web")
	if r.Status != http.StatusBadGateway || r.Code() != "CAPTCHA_UNAVAILABLE" {
		t.Errorf("provider down = %d %s, want 502 CAPTCHA_UNAVAILABLE", r.Status, r.Body)
	}
}

func TestEmbedHost(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	js := e.Do("GET", "/embed/forms.js", nil)
	if js.Status != 200 || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(string(js.Body), e.URL+"/forms") {
		t.Errorf("forms.js = %d %q", js.Status, js.Header.Get("Content-Type"))
	}
	if r := e.Do("GET", "/embed/forms.js", nil, "If-None-Match", js.Header.Get("ETag")); r.Status != 304 {
		t.Errorf("forms.js with its ETag = %d, want 304", r.Status)
	}
	if css := e.Do("GET", "/embed/forms.css", nil); css.Status != 200 || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("forms.css = %d", css.Status)
	}
	page := e.Do("GET", "/embed/f/contact?key=pk_live_demo_web", nil)
	if page.Status != 200 || !strings.Contains(string(page.Body), `data-gatehouse-form="contact"`) || !strings.Contains(string(page.Body), `data-key="pk_live_demo_web"`) {
		t.Errorf("iframe page = %d %s", page.Status, page.Body)
	}
	for _, bad := range []struct{ path, fields string }{
		{"/embed/f/contact", "key"},
		{"/embed/f/contact?key=%22%3E%3Cscript%3E", "key"},
		{"/embed/f/Bad%20Slug?key=pk_live_demo_web", "slug"},
		{"/embed/f/Bad%20Slug", "slug,key"},
	} {
		r := e.Do("GET", bad.path, nil)
		var body struct {
			Details []struct{ Field, Problem string }
		}
		_ = json.Unmarshal(r.Body, &body)
		var fields []string
		for _, d := range body.Details {
			fields = append(fields, d.Field)
		}
		if r.Status != 400 || r.Code() != "VALIDATION_FAILED" || strings.Join(fields, ",") != bad.fields {
			t.Errorf("GET %s = %d %s, want 400 VALIDATION_FAILED with details for %s", bad.path, r.Status, r.Body, bad.fields)
		}
	}
}

func TestSubmissionsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var id string
	t.Run("first run", func(t *testing.T) {
		e := startIn(t, dir, func(c *config.Config) { c.Storage.SyncWrites = true })
		r := e.Do("POST", "/forms/forms/other/submit", `{"note":"durable"}`, "X-API-Key", "pk_live_demo_web")
		var rec struct{ ID string }
		_ = json.Unmarshal(r.Body, &rec)
		if r.Status != 201 || rec.ID == "" {
			t.Fatalf("submit = %d %s", r.Status, r.Body)
		}
		id = rec.ID
	})
	e := startIn(t, dir, nil)
	r := e.Admin("GET", "/projects/demo/forms/other/submissions/"+id, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"note":"durable"`) {
		t.Errorf("after restart GET submission = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/projects/demo/forms/other/submissions/00000000-0000-7000-8000-000000000000", nil); r.Status != 404 || r.Code() != "SUBMISSION_NOT_FOUND" {
		t.Errorf("unknown submission = %d %s", r.Status, r.Body)
	}
}

func TestFormChangeSeenAtOnce(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	if r := e.Do("GET", "/forms/forms/other", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 200 {
		t.Fatalf("GET other = %d", r.Status)
	}
	e.Apply(`
orgs:
  - slug: acme
    projects:
      - id: demo
        forms:
          - {slug: other, published: true, visibility: private, fields: [{name: note, type: text}]}
`)
	if r := e.Do("GET", "/forms/forms/other", nil, "X-API-Key", "pk_live_demo_web"); r.Status != 403 || r.Code() != "FORM_PRIVATE" {
		t.Errorf("GET other after making it private = %d %s, want 403 FORM_PRIVATE (cache not invalidated?)", r.Status, r.Body)
	}
}

func TestEmbedOwnHost(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.EmbedHost = "http://embed.example.test" })
	for _, path := range []string{"/forms.js", "/forms.css", "/f/contact?key=pk_live_demo_web"} {
		if r := e.Do("GET", path, nil, "Host", "embed.example.test"); r.Status != 200 {
			t.Errorf("GET %s on the embed host = %d", path, r.Status)
		}
	}
	page := string(e.Do("GET", "/f/contact?key=pk_live_demo_web", nil, "Host", "embed.example.test").Body)
	if !strings.Contains(page, `src="http://embed.example.test/forms.js"`) || !strings.Contains(page, `data-api="`+e.URL+`/forms"`) {
		t.Errorf("iframe page on the embed host = %s", page)
	}
}

// TestMalformedMultipart: a broken multipart body is checked by the forms product after the
// key (so no key is still 401 with WWW-Authenticate and CORS), and refused 400
// VALIDATION_FAILED with details, never with the parser's text.
func TestMalformedMultipart(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	tests := []struct {
		name   string
		key    string
		ctype  string
		body   string
		status int
		code   string
	}{
		{"no key, broken body", "", "multipart/form-data; boundary=xyz", "garbage", 401, "-"},
		{"bad key, broken body", "pk_live_nope_nope", "multipart/form-data; boundary=xyz", "garbage", 401, "-"},
		{"broken body", "pk_live_demo_web", "multipart/form-data; boundary=xyz", "garbage", 400, "VALIDATION_FAILED"},
		{"no boundary", "pk_live_demo_web", "multipart/form-data", "garbage", 400, "VALIDATION_FAILED"},
		{"unknown form, broken body", "pk_live_demo_web", "multipart/form-data; boundary=xyz", "garbage", 404, "FORM_NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := submit
			if tc.code == "FORM_NOT_FOUND" {
				path = "/forms/forms/nope/submit"
			}
			h := []string{"Content-Type", tc.ctype, "Origin", "https://site.example"}
			if tc.key != "" {
				h = append(h, "X-API-Key", tc.key)
			}
			r := e.Do("POST", path, strings.NewReader(tc.body), h...)
			if r.Status != tc.status || (tc.code == "-" && r.Code() != "") || (tc.code != "-" && r.Code() != tc.code) {
				t.Fatalf("POST %s (%s) = %d %s, want %d %s", path, tc.name, r.Status, r.Body, tc.status, tc.code)
			}
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("POST %s (%s): Access-Control-Allow-Origin = %q, want *", path, tc.name, got)
			}
			if tc.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("POST %s (%s): 401 without WWW-Authenticate", path, tc.name)
			}
			if strings.Contains(string(r.Body), "NextPart") || strings.Contains(string(r.Body), "cannot read") {
				t.Errorf("POST %s (%s): body %s carries the parser's text", path, tc.name, r.Body)
			}
			if tc.code == "VALIDATION_FAILED" {
				var b struct {
					Details []struct{ Field, Problem string }
				}
				if err := json.Unmarshal(r.Body, &b); err != nil || len(b.Details) != 1 || b.Details[0].Field != "body" {
					t.Errorf("POST %s (%s): details %s, want one problem for field body", path, tc.name, r.Body)
				}
			}
		})
	}
}
