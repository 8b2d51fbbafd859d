package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildExamples compiles plugins/examples/<name> to Wasm, as the Makefile's build.sh does.
func buildExamples(t testing.TB, names ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(dir, n+".wasm")
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", path, ".")
			cmd.Dir = filepath.Join("..", "..", "..", "plugins", "examples", n)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("building %s: %v\n%s", n, err, b)
				return
			}
			mu.Lock()
			out[n] = path
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func do(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// hmacToken makes a token the captcha-hmac example accepts.
func hmacToken(secret string, expiry time.Time) string {
	msg := fmt.Sprintf("%d.nonce1", expiry.Unix())
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// The example plugins run inside the real gateway: the spam filter rejects with its code,
// the offline captcha verifier accepts a good token and refuses a bad one, and the redactor
// removes a field from every records answer.
func TestExamplePluginsInTheGateway(t *testing.T) {
	t.Parallel()
	mods := buildExamples(t, "spamguard", "captcha-hmac", "redactor")
	data := t.TempDir()
	tenants := fmt.Sprintf(`
orgs:
  - slug: acme
    projects:
      - id: plug
        keys:
          - {name: web, value: pk_live_plug_web, products: [forms, records]}
          - {name: server, value: sk_live_plug_server, products: [email]}
        email:
          templates:
            - {slug: code, subject: "Hello {{name}}", body: "Your code is {{code}}."}
        forms:
          - slug: contact
            published: true
            fields:
              - {name: message, type: textarea, required: true}
          - slug: gated
            published: true
            captcha: {plugin: hmac}
            fields:
              - {name: message, type: text, required: true}
        collections:
          - name: authors
            public: true
            fields:
              - {name: title, type: text}
              - {name: views, type: number}
            records:
              - {id: au-1, published: true, data: {title: Ada, views: 5}}
          - name: posts
            public: true
            fields:
              - {name: title, type: text}
              - {name: views, type: number}
              - {name: author, type: relation, collection: authors}
            records:
              - {id: p1, published: true, data: {title: Hello, views: 3, author: au-1}}
        plugins:
          - {name: spam, module: %q, hooks: [forms.submit], config: {blockedWords: "casino,loan"}}
          - {name: hmac, module: %q, hooks: [captcha.verify], config: {secret: s3cret}}
          - {name: redact, module: %q, hooks: [records.read, email.send], config: {fields: "views,code"}}
`, mods["spamguard"], mods["captcha-hmac"], mods["redactor"])
	file := filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(file, []byte(tenants), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := emptyConfig(t, data)
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", file)
	const key = "pk_live_plug_web"

	t.Run("spam filter", func(t *testing.T) {
		code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, `{"data":{"message":"cheap casino chips"}}`)
		if code != 422 || !strings.Contains(body, `"error":"SPAM_DETECTED"`) {
			t.Errorf("spam submission = %d %s, want 422 SPAM_DETECTED", code, body)
		}
		if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, `{"data":{"message":"hello there"}}`); code != 201 {
			t.Errorf("clean submission = %d %s, want 201", code, body)
		}
	})
	t.Run("offline captcha", func(t *testing.T) {
		good := hmacToken("s3cret", time.Now().Add(5*time.Minute))
		if code, body := do(t, "POST", p.url+"/forms/forms/gated/submit", key, `{"data":{"message":"hi"},"captcha-response":"`+good+`"}`); code != 201 {
			t.Errorf("good token = %d %s, want 201", code, body)
		}
		bad := hmacToken("wrong", time.Now().Add(5*time.Minute))
		if code, body := do(t, "POST", p.url+"/forms/forms/gated/submit", key, `{"data":{"message":"hi"},"captcha-response":"`+bad+`"}`); code != 403 || !strings.Contains(body, "CAPTCHA_FAILED") {
			t.Errorf("bad token = %d %s, want 403 CAPTCHA_FAILED", code, body)
		}
		if code, body := do(t, "POST", p.url+"/forms/forms/gated/submit", key, `{"data":{"message":"hi"}}`); code != 400 || !strings.Contains(body, "CAPTCHA_REQUIRED") {
			t.Errorf("no token = %d %s, want 400 CAPTCHA_REQUIRED", code, body)
		}
	})
	t.Run("redactor", func(t *testing.T) {
		base := p.url + "/records/projects/plug/collections/posts/records"
		for _, url := range []string{base, base + "/p1", base + "?populate=author", base + "/p1?populate=*"} {
			code, body := do(t, "GET", url, key, "")
			if code != 200 || strings.Contains(body, "views") || !strings.Contains(body, "Hello") {
				t.Errorf("GET %s = %d %s, want 200 without views", url, code, body)
			}
			if strings.Contains(url, "populate") && !strings.Contains(body, "Ada") {
				t.Errorf("GET %s did not populate the author: %s", url, body)
			}
		}
	})
	t.Run("redactor masks email variables", func(t *testing.T) {
		code, body := do(t, "POST", p.url+"/email/notifications/send", "sk_live_plug_server",
			`{"to":{"email":"ada@example.com"},"templateId":"code","variables":{"name":"Ada","code":"481516"}}`)
		if code != 202 {
			t.Fatalf("send = %d %s", code, body)
		}
		var eml string
		for deadline := time.Now().Add(10 * time.Second); eml == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			files, _ := filepath.Glob(filepath.Join(data, "outbox", "*.eml"))
			if len(files) > 0 {
				b, _ := os.ReadFile(files[0])
				eml = string(b)
			}
		}
		if !strings.Contains(eml, "Your code is [redacted].") || strings.Contains(eml, "481516") || !strings.Contains(eml, "Hello Ada") {
			t.Errorf("delivered message does not have the code masked:\n%s", eml)
		}
	})
	t.Run("upload and swap", func(t *testing.T) {
		wasm, err := os.ReadFile(mods["spamguard"])
		if err != nil {
			t.Fatal(err)
		}
		if code, body := p.admin(t, "POST", "/plugins?project=plug&name=sg", string(wasm)); code != 201 || !strings.Contains(string(body), `"sha256"`) {
			t.Fatalf("upload = %d %s", code, body)
		}
		if code, body := p.admin(t, "POST", "/plugins?project=plug&name=junk", "not wasm"); code != 400 {
			t.Errorf("upload of junk = %d %s, want 400", code, body)
		}
		swapped := strings.Replace(tenants, fmt.Sprintf(`module: %q, hooks: [forms.submit], config: {blockedWords: "casino,loan"}`, mods["spamguard"]),
			`module: sg, hooks: [forms.submit], config: {blockedWords: "pizza"}`, 1)
		if swapped == tenants {
			t.Fatal("test bug: the plugin line was not replaced")
		}
		if code, body := p.admin(t, "POST", "/apply", swapped); code != 200 || !strings.Contains(string(body), `"changed":true`) {
			t.Fatalf("apply = %d %s", code, body)
		}
		if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, `{"data":{"message":"pizza party"}}`); code != 422 {
			t.Errorf("after swap, new blocked word = %d %s, want 422", code, body)
		}
		if code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", key, `{"data":{"message":"casino"}}`); code != 201 {
			t.Errorf("after swap, old blocked word = %d %s, want 201", code, body)
		}
	})
	p.stop(t)
}
