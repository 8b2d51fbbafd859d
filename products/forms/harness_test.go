package forms_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/embedhost"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

const tenantsDoc = `
orgs:
  - slug: acme
    keys:
      - {name: org-pk, value: pk_live_acme_org_only, products: [forms]}
    projects:
      - id: demo
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, files, records, membership]}
          - {name: web2, value: pk_live_demo_web2, products: [forms]}
          - {name: server, value: sk_live_demo_server, products: [email, files, records, forms]}
          - {name: files-only, value: pk_live_demo_files, products: [files]}
          - {name: old, value: pk_live_demo_revoked, products: [forms], revoked: true}
        forms:
          - slug: contact
            title: Contact us
            published: true
            visibility: public
            captcha: false
            fields:
              - {name: email, type: email, label: Email, required: true}
              - {name: message, type: textarea, label: Message, required: true, maxLength: 50}
              - {name: age, type: number, min: 0}
              - {name: topic, type: select, options: [sales, support]}
              - {name: tags, type: multiselect, options: [a, b, c]}
              - {name: agree, type: checkbox}
              - {name: photo, type: file, label: Photo, accept: [image/png, image/jpeg]}
            settings: {successMessage: "Thanks!"}
          - slug: other
            title: Other
            published: true
            fields:
              - {name: note, type: text}
          - slug: gallery
            title: Two photos
            published: true
            fields:
              - {name: caption, type: text}
              - {name: front, type: file, accept: [image/png]}
              - {name: back, type: file, accept: [image/png]}
          - slug: internal
            published: true
            visibility: private
            fields:
              - {name: answer, type: text}
          - slug: draft
            published: false
            fields:
              - {name: answer, type: text}
          - slug: guarded
            published: true
            captcha: true
            fields:
              - {name: name, type: text, required: true}
      - id: ts
        keys:
          - {name: web, value: pk_live_ts_web, products: [forms]}
        captcha: {provider: turnstile, siteKey: ts-site, secret: ts-secret}
        forms:
          - {slug: guarded, published: true, captcha: true, fields: [{name: name, type: text, required: true}]}
      - id: hc
        keys:
          - {name: web, value: pk_live_hc_web, products: [forms]}
        captcha: {provider: hcaptcha, siteKey: hc-site, secret: hc-secret}
        forms:
          - {slug: guarded, published: true, captcha: true, fields: [{name: name, type: text, required: true}]}
      - id: rc
        keys:
          - {name: web, value: pk_live_rc_web, products: [forms]}
        captcha: {provider: recaptcha, siteKey: rc-site, secret: rc-secret}
        forms:
          - {slug: guarded, published: true, captcha: true, fields: [{name: name, type: text, required: true}]}
`

// fakeVerify is a local siteverify server speaking the providers' formats: Turnstile JSON,
// hCaptcha and reCAPTCHA form-encoded. Token "good" passes; anything else fails.
type fakeVerify struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []verifyCall
}

type verifyCall struct {
	provider, ctype, secret, token, remoteIP, siteKey string
}

func newFakeVerify(t *testing.T) *fakeVerify {
	f := &fakeVerify{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := strings.TrimPrefix(r.URL.Path, "/")
		call := verifyCall{provider: provider, ctype: r.Header.Get("Content-Type")}
		raw, _ := io.ReadAll(r.Body)
		if provider == "turnstile" && call.ctype == "application/json" {
			var m map[string]string
			_ = json.Unmarshal(raw, &m)
			call.secret, call.token, call.remoteIP = m["secret"], m["response"], m["remoteip"]
		} else if call.ctype == "application/x-www-form-urlencoded" {
			v, _ := url.ParseQuery(string(raw))
			call.secret, call.token, call.remoteIP, call.siteKey = v.Get("secret"), v.Get("response"), v.Get("remoteip"), v.Get("sitekey")
		} else {
			// hCaptcha answers form encoding only; anything else is its "missing-input" error.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"success":false,"error-codes":["missing-input-secret"]}`))
			return
		}
		f.mu.Lock()
		f.calls = append(f.calls, call)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if call.token == "good" && strings.HasSuffix(call.secret, "-secret") {
			switch provider {
			case "turnstile":
				_, _ = w.Write([]byte(`{"success":true,"error-codes":[],"challenge_ts":"2026-11-22T12:00:00.000Z","hostname":"example.com","action":"","cdata":""}`))
			case "hcaptcha":
				_, _ = w.Write([]byte(`{"success":true,"challenge_ts":"2026-11-22T12:00:00Z","hostname":"example.com","credit":false}`))
			default:
				_, _ = w.Write([]byte(`{"success":true,"challenge_ts":"2026-11-22T12:00:00Z","hostname":"example.com"}`))
			}
			return
		}
		_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeVerify) Calls() []verifyCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]verifyCall(nil), f.calls...)
}

type env struct {
	*edgetest.Harness
	verify *fakeVerify
	clock  *edgetest.Clock
	svc    *forms.Service
}

func start(t *testing.T, edit func(*config.Config)) *env {
	t.Helper()
	return startIn(t, "", edit)
}

// startIn starts the gateway on the data folder dir (a fresh one when empty).
func startIn(t *testing.T, dir string, edit func(*config.Config)) *env {
	t.Helper()
	return startBlobs(t, dir, edit, func(t testing.TB, dir string) blob.Store {
		blobs, err := blob.NewLocal(dir + "/blobs")
		if err != nil {
			t.Fatal(err)
		}
		return blobs
	})
}

// startBlobs is startIn with the blob store newBlobs returns (given the data folder).
func startBlobs(t *testing.T, dir string, edit func(*config.Config), newBlobs func(t testing.TB, dir string) blob.Store) *env {
	t.Helper()
	e := &env{verify: newFakeVerify(t), clock: edgetest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))}
	e.Harness = edgetest.New(t, edgetest.Options{
		Tenants: tenantsDoc,
		Config:  edit,
		Dir:     dir,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			blobs := newBlobs(t, d.Dir)
			cur, err := cursor.NewCursors([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			u := e.verify.srv.URL
			svc, err := forms.NewService(forms.Options{
				DB: d.DB, Blobs: blobs, Now: e.clock.Now,
				Verifiers:  forms.NewVerifiers(forms.VerifiersOptions{TurnstileURL: u + "/turnstile", HCaptchaURL: u + "/hcaptcha", ReCaptchaURL: u + "/recaptcha"}),
				AdminBase:  d.Config.PublicURL + "/admin/v1",
				SpoolDir:   d.Dir + "/spool",
				Registerer: d.Registry,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			join(t, d.Tenancy, svc)
			e.svc = svc
			t.Cleanup(func() { _ = svc.Close() })
			return []edge.Product{forms.NewAPI(svc, d.Auth, cur, d.Config.TrustedProxies), embedhost.New(embedhost.Options{PublicURL: d.Config.PublicURL, EmbedURL: d.Config.EmbedHost})}
		},
	})
	return e
}

// part is one multipart part: a field value, or a file when filename is set.
type part struct {
	name, value, filename, ctype string
	data                         []byte
}

func multipartBody(t testing.TB, parts ...part) (io.Reader, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.filename == "" {
			_ = w.WriteField(p.name, p.value)
			continue
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.filename+`"`)
		h.Set("Content-Type", p.ctype)
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write(p.data)
	}
	_ = w.Close()
	return &buf, w.FormDataContentType()
}

// pngBytes is a 1x1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
