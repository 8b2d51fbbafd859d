package host

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSpamguard(t *testing.T) {
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "spamguard", Hooks: []string{HookFormsSubmit},
		Config: map[string]string{"blockedWords": "casino, loan", "rejectCode": "SPAM_DETECTED"}})
	ctx := context.Background()
	tests := []struct {
		name string
		data map[string]any
		want Action
	}{
		{"clean", map[string]any{"email": "a@b.test", "message": "Hello, I like your product", "n": 3}, Allow},
		{"keyword", map[string]any{"email": "a@b.test", "message": "Best CASINO offers"}, Reject},
		{"escaped keyword", map[string]any{"message": "cheap \u006coan \u00e9"}, Reject},
		{"links", map[string]any{"message": "see http://a.test https://b.test http://c.test"}, Reject},
		{"two links", map[string]any{"message": "see http://a.test https://b.test"}, Allow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := h.FormsSubmit(ctx, "demo", "contact", tc.data)
			if err != nil {
				t.Fatalf("FormsSubmit: %v", err)
			}
			if v.Action != tc.want {
				t.Fatalf("FormsSubmit(%v) = %+v, want %s", tc.data, v, tc.want)
			}
			if v.Action == Reject && (v.Code != "SPAM_DETECTED" || v.Plugin != "spamguard" || v.Message == "") {
				t.Errorf("FormsSubmit(%v) = %+v, want code SPAM_DETECTED from spamguard", tc.data, v)
			}
		})
	}
	// Another project does not run demo's plugins.
	if v, err := h.FormsSubmit(ctx, "other", "contact", map[string]any{"message": "casino"}); err != nil || v.Action != Allow {
		t.Errorf("FormsSubmit(other project) = %+v, %v; want allow", v, err)
	}
}

func TestRedactor(t *testing.T) {
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "redactor", Hooks: []string{HookRecordsRead},
		Config: map[string]string{"fields": "email,internalNote"}})
	page := []json.RawMessage{
		json.RawMessage(`{"id":"post-1","title":"Hello","internalNote":"secret","author":{"id":"au-1","title":"Ann","email":"ann@x.test"},"related":[{"id":"post-2","internalNote":"x","author":{"id":"au-2","email":"b@x.test"}}]}`),
		json.RawMessage(`{"id":"post-3","title":"Esc\"aped \u00e9","views":3,"tags":["go","wasm"],"author":null}`),
	}
	got, err := h.RecordsRead(context.Background(), "demo", "posts", page)
	if err != nil {
		t.Fatalf("RecordsRead: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("RecordsRead returned %d records, want 2", len(got))
	}
	for i, r := range got {
		s := string(r)
		if strings.Contains(s, "email") || strings.Contains(s, "internalNote") {
			t.Errorf("record %d still has a redacted field: %s", i, s)
		}
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			t.Errorf("record %d is not JSON: %v: %s", i, err, s)
		}
	}
	var first struct {
		Title   string
		Author  map[string]any
		Related []map[string]any
	}
	_ = json.Unmarshal(got[0], &first)
	if first.Title != "Hello" || first.Author["title"] != "Ann" || len(first.Related) != 1 || first.Related[0]["id"] != "post-2" {
		t.Errorf("RecordsRead lost data: %s", got[0])
	}
	var second map[string]any
	_ = json.Unmarshal(got[1], &second)
	if second["title"] != "Esc\"aped é" || second["views"] != 3.0 {
		t.Errorf("RecordsRead changed values: %s", got[1])
	}
}

// hmacToken makes a token the captcha-hmac example accepts.
func hmacToken(secret string, expiry time.Time, nonce string) string {
	payload := fmt.Sprintf("%d.%s", expiry.Unix(), nonce)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestCaptchaHMAC(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	h := newHost(t, func(o *Options) { o.Now = func() time.Time { return now } })
	mustRegister(t, h, Registration{Name: "captcha-hmac", Hooks: []string{HookCaptchaVerify},
		Config: map[string]string{"secret": "s3cret"}})
	tests := []struct {
		name  string
		token string
		want  bool
	}{
		{"good", hmacToken("s3cret", now.Add(time.Minute), "n1"), true},
		{"wrong secret", hmacToken("other", now.Add(time.Minute), "n1"), false},
		{"expired", hmacToken("s3cret", now.Add(-time.Second), "n1"), false},
		{"tampered", strings.Replace(hmacToken("s3cret", now.Add(time.Minute), "n1"), "n1", "n2", 1), false},
		{"garbage", "not-a-token", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		got, err := h.CaptchaVerify(context.Background(), "demo", "captcha-hmac", tc.token, "203.0.113.9")
		if err != nil || got != tc.want {
			t.Errorf("CaptchaVerify(%s) = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := h.CaptchaVerify(context.Background(), "demo", "nope", "x", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("CaptchaVerify(unknown plugin) error = %v, want ErrNotFound", err)
	}
}

func TestTurnstile(t *testing.T) {
	var gotBody url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, _ = url.ParseQuery(string(b))
		ok := gotBody.Get("secret") == "ts-secret" && gotBody.Get("response") == "good-token"
		fmt.Fprintf(w, `{"success":%v,"error-codes":[]}`, ok)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	// A test-only name for the server, resolved to 127.0.0.1 by LookupHost.
	verifyURL := "http://siteverify.test:" + u.Port() + "/turnstile/v0/siteverify"
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "siteverify.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	reg := Registration{Name: "turnstile", Hooks: []string{HookCaptchaVerify},
		AllowHosts: []string{"http://siteverify.test:" + u.Port()},
		Config:     map[string]string{"secret": "ts-secret", "verifyURL": verifyURL}}

	h := newHost(t, func(o *Options) { o.Egress = testEgress{allow: loopbackOnly, lookup: lookup} })
	mustRegister(t, h, reg)
	ctx := context.Background()
	if ok, err := h.CaptchaVerify(ctx, "demo", "turnstile", "good-token", "198.51.100.7"); err != nil || !ok {
		t.Fatalf("CaptchaVerify(good) = %v, %v; want true", ok, err)
	}
	if gotBody.Get("remoteip") != "198.51.100.7" {
		t.Errorf("siteverify got remoteip %q", gotBody.Get("remoteip"))
	}
	// A token carrying a placeholder must not pull the secret in.
	if ok, err := h.CaptchaVerify(ctx, "demo", "turnstile", "{{config.secret}}", ""); err != nil || ok {
		t.Errorf("CaptchaVerify(placeholder token) = %v, %v; want false", ok, err)
	}
	if gotBody.Get("response") != "{{config.secret}}" {
		t.Errorf("placeholder in user input was expanded: response=%q", gotBody.Get("response"))
	}
	if ok, err := h.CaptchaVerify(ctx, "demo", "turnstile", "bad-token", ""); err != nil || ok {
		t.Errorf("CaptchaVerify(bad) = %v, %v; want false", ok, err)
	}

	// Under a policy refusing loopback the same name resolving to 127.0.0.1
	// is refused at connect time, and the captcha fails closed.
	h2 := newHost(t, func(o *Options) { o.Egress = testEgress{lookup: lookup} })
	mustRegister(t, h2, reg)
	ok, err := h2.CaptchaVerify(ctx, "demo", "turnstile", "good-token", "")
	if ok || !errors.Is(err, ErrPluginFailed) {
		t.Errorf("CaptchaVerify(policy refusing loopback) = %v, %v; want false, ErrPluginFailed", ok, err)
	}
}
