package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func (pl *plugin) allowsURL(u *url.URL) bool {
	if u.User != nil {
		return false
	}
	for _, r := range pl.allow {
		if r.allows(u) {
			return true
		}
	}
	return false
}

// Egress is the outbound-connection policy every http_fetch connects through. The gateway
// passes its one policy (edge/egress.Policy, decisions.md 8.3), so a plugin reaches only what
// webhooks, SMTP and captcha calls may reach: loopback, private, link-local and metadata
// addresses are refused after DNS, at connect time and on every redirect hop, unless the
// operator sets egress.allow_private_networks. Without an Egress every fetch is denied.
type Egress interface {
	// Client returns an HTTP client whose connections follow the policy (the host takes one
	// and keeps it: it owns the connection pool).
	Client() *http.Client
	// MaxResponseBytes is the policy's cap on a response body; the smaller of it and
	// FetchLimits.MaxResponseBytes applies.
	MaxResponseBytes() int64
	// Refused reports whether err is the policy refusing an address or URL (answered to the
	// guest as "denied" rather than "failed").
	Refused(err error) bool
}

var errHostDenied = errors.New("host not in allowHosts")

// fetchRequest is what the guest passes to http_fetch.
type fetchRequest struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// httpFetch implements the http_fetch host function: it returns the HTTP
// status, or a negative status code; the body is then read with
// http_body_read.
func (cs *callState) httpFetch(ctx context.Context, mem guestMemory, ptr, n uint64) int32 {
	pl := cs.pl
	lim := pl.h.opts.Fetch
	cs.fetched, cs.fetchBody = false, nil
	if !pl.canFetch {
		return statusDenied
	}
	if pl.h.client == nil {
		pl.logs.Add("host: http_fetch: the gateway gave the plugin host no egress policy")
		return statusDenied
	}
	if cs.outputLimit == 0 {
		return statusInvalid // not inside a hook call
	}
	cs.fetches++
	if cs.fetches > lim.CallsPerInvocation {
		pl.logs.Add("host: http_fetch: more than " + strconv.Itoa(lim.CallsPerInvocation) + " calls")
		return statusLimit
	}
	if uint32(n) > uint32(lim.MaxRequestBytes) {
		return statusLimit
	}
	raw, ok := mem.Read(uint32(ptr), uint32(n))
	if !ok {
		return statusInvalid
	}
	req, status := pl.buildRequest(ctx, raw)
	if status != 0 {
		return status
	}
	fctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	req = req.WithContext(fctx)

	// The policy's client, with the plugin's rules first on every redirect: its own redirect
	// cap and allowHosts, then the policy's (scheme, credentials, address literals).
	client := *pl.h.client
	policyRedirect := client.CheckRedirect
	redirects := 0
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		redirects++
		if redirects > lim.MaxRedirects {
			return errors.New("too many redirects")
		}
		if !pl.allowsURL(r.URL) {
			return fmt.Errorf("%w: redirect to %s", errHostDenied, r.URL.Redacted())
		}
		if policyRedirect != nil {
			return policyRedirect(r, via)
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": " + err.Error())
		if errors.Is(err, errHostDenied) || pl.h.opts.Egress.Refused(err) {
			return statusDenied
		}
		return statusFailed
	}
	defer resp.Body.Close()
	limit := min(int64(lim.MaxResponseBytes), pl.h.opts.Egress.MaxResponseBytes())
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": reading body: " + err.Error())
		return statusFailed
	}
	if int64(len(body)) > limit {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": response over " + strconv.FormatInt(limit, 10) + " bytes")
		return statusLimit
	}
	cs.fetched, cs.fetchBody = true, body
	return int32(resp.StatusCode)
}

var allowedMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// buildRequest parses and checks the guest's request and inserts config
// values for {{config.KEY}} placeholders in headers and body.
func (pl *plugin) buildRequest(ctx context.Context, raw []byte) (*http.Request, int32) {
	var fr fetchRequest
	if err := json.Unmarshal(raw, &fr); err != nil {
		return nil, statusInvalid
	}
	if fr.Method == "" {
		fr.Method = "GET"
	}
	fr.Method = strings.ToUpper(fr.Method)
	if !allowedMethods[fr.Method] {
		return nil, statusInvalid
	}
	u, err := url.Parse(fr.URL)
	if err != nil || u.Host == "" {
		return nil, statusInvalid
	}
	if !pl.allowsURL(u) {
		pl.logs.Add("host: http_fetch to " + u.Redacted() + " denied: not in allowHosts")
		return nil, statusDenied
	}
	var body io.Reader
	if fr.Body != "" {
		body = strings.NewReader(pl.expand(fr.Body))
	}
	req, err := http.NewRequestWithContext(ctx, fr.Method, u.String(), body)
	if err != nil {
		return nil, statusInvalid
	}
	for k, v := range fr.Headers {
		v = pl.expand(v)
		if !validHeader(k, v) || strings.EqualFold(k, "Host") {
			return nil, statusInvalid
		}
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "gatehouse-plugin/"+pl.reg.Name)
	return req, 0
}

// expand replaces {{config.KEY}} with the plugin's config value, in one
// pass: inserted values are not scanned again.
func (pl *plugin) expand(s string) string {
	if !strings.Contains(s, "{{config.") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{config.")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			break
		}
		key := s[i+len("{{config.") : i+j]
		b.WriteString(s[:i])
		if v, ok := pl.reg.Config[key]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+2]) // unknown keys stay as written
		}
		s = s[i+j+2:]
	}
	b.WriteString(s)
	return b.String()
}

func validHeader(k, v string) bool {
	if k == "" || len(k) > 256 || len(v) > 8<<10 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return !bytes.ContainsAny([]byte(v), "\r\n\x00")
}
