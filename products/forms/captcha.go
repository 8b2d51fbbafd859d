package forms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Challenge is what a verifier checks: the token a widget produced, the submitter's IP, and
// the project's keys (a plugin verifier may ignore them).
type Challenge struct {
	Token    string
	RemoteIP string
	SiteKey  string
	Secret   string
	// Project and Form name the submission (plugins use them for their own config).
	Project string
	Form    string
}

// Verdict is a verifier's answer. Codes are the provider's error codes, kept for logs.
type Verdict struct {
	Success bool
	Codes   []string
}

// Verifier checks one captcha token. An error means no verdict could be had (network, bad
// answer): the submission is refused with 502 CAPTCHA_UNAVAILABLE, never accepted.
type Verifier interface {
	Verify(ctx context.Context, ch Challenge) (Verdict, error)
}

// PluginVerifiers finds the verifier a project's plugin provides (the plugins issue implements
// it with Wasm); Options.Plugins provides it.
type PluginVerifiers interface {
	CaptchaVerifier(ctx context.Context, project, plugin string) (Verifier, error)
}

// Provider names of the built-in verifiers.
const (
	ProviderTurnstile = "turnstile"
	ProviderHCaptcha  = "hcaptcha"
	ProviderReCaptcha = "recaptcha"
)

// SiteVerify is a built-in verifier calling a provider's siteverify endpoint.
type SiteVerify struct {
	// Provider is turnstile, hcaptcha or recaptcha; it picks the request format.
	Provider string
	// URL is the siteverify endpoint (configurable, so tests use a local fake).
	URL string
	// Client is the HTTP client (a 10 s timeout client when nil).
	Client *http.Client
}

var _ Verifier = (*SiteVerify)(nil)

var defaultClient = &http.Client{Timeout: 10 * time.Second}

// siteVerifyAnswer is the common part of the three providers' answers.
type siteVerifyAnswer struct {
	Success    bool     `json:"success"`
	ErrorCodes []string `json:"error-codes"`
}

// Verify posts the secret, token and remote IP in the provider's format: Turnstile takes JSON
// (its documented format), hCaptcha and reCAPTCHA take application/x-www-form-urlencoded
// (hCaptcha accepts nothing else). hCaptcha also gets the site key, which it checks.
func (v *SiteVerify) Verify(ctx context.Context, ch Challenge) (Verdict, error) {
	var body io.Reader
	ctype := ""
	switch v.Provider {
	case ProviderTurnstile:
		m := map[string]string{"secret": ch.Secret, "response": ch.Token}
		if ch.RemoteIP != "" {
			m["remoteip"] = ch.RemoteIP
		}
		raw, _ := json.Marshal(m)
		body, ctype = bytes.NewReader(raw), "application/json"
	case ProviderHCaptcha, ProviderReCaptcha:
		f := url.Values{"secret": {ch.Secret}, "response": {ch.Token}}
		if ch.RemoteIP != "" {
			f.Set("remoteip", ch.RemoteIP)
		}
		if v.Provider == ProviderHCaptcha && ch.SiteKey != "" {
			f.Set("sitekey", ch.SiteKey)
		}
		body, ctype = strings.NewReader(f.Encode()), "application/x-www-form-urlencoded"
	default:
		return Verdict{}, fmt.Errorf("forms: unknown captcha provider %q", v.Provider)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, body)
	if err != nil {
		return Verdict{}, fmt.Errorf("forms: siteverify request: %w", err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	client := v.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Verdict{}, fmt.Errorf("forms: %s siteverify: %w", v.Provider, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Verdict{}, fmt.Errorf("forms: %s siteverify: %w", v.Provider, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Verdict{}, fmt.Errorf("forms: %s siteverify answered %d", v.Provider, resp.StatusCode)
	}
	var a siteVerifyAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Verdict{}, fmt.Errorf("forms: %s siteverify answer: %w", v.Provider, err)
	}
	return Verdict{Success: a.Success, Codes: a.ErrorCodes}, nil
}

// ErrNoVerifier reports a provider with no verifier configured.
var ErrNoVerifier = errors.New("forms: no verifier for the captcha provider")
