package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
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

var deniedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// PublicAddr is the default Options.AllowAddr: it refuses loopback,
// private (RFC 1918, unique local), carrier-grade NAT, link-local (which
// holds the cloud metadata address 169.254.169.254), multicast,
// documentation and reserved ranges, in IPv4 and IPv6, including IPv4
// addresses mapped into IPv6 (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d).
func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, p := range deniedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var (
	errAddrDenied = errors.New("address not allowed")
	errHostDenied = errors.New("host not in allowHosts")
)

func newFetchClient(o Options) *http.Client {
	lookup := o.LookupHost
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	// The Control hook checks the address actually dialled, after any DNS
	// answer: a name that resolves (or re-resolves) to a private address
	// is refused at connect time.
	dialer := &net.Dialer{
		Timeout: o.Fetch.Timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !o.AllowAddr(ap.Addr()) {
				return fmt.Errorf("%w: %s", errAddrDenied, address)
			}
			return nil
		},
	}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
		var lastErr error = fmt.Errorf("%w: %s has no allowed address", errAddrDenied, host)
		for _, a := range addrs {
			if !o.AllowAddr(a) {
				continue
			}
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		return nil, lastErr
	}
	tr := &http.Transport{
		Proxy:                  nil, // never an environment proxy
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    o.Fetch.Timeout,
		ResponseHeaderTimeout:  o.Fetch.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: tr}
}

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

	client := *pl.h.client
	redirects := 0
	client.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		redirects++
		if redirects > lim.MaxRedirects {
			return errors.New("too many redirects")
		}
		if !pl.allowsURL(r.URL) {
			return fmt.Errorf("%w: redirect to %s", errHostDenied, r.URL.Redacted())
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": " + err.Error())
		if errors.Is(err, errAddrDenied) || errors.Is(err, errHostDenied) {
			return statusDenied
		}
		return statusFailed
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(lim.MaxResponseBytes)+1))
	if err != nil {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": reading body: " + err.Error())
		return statusFailed
	}
	if len(body) > lim.MaxResponseBytes {
		pl.logs.Add("host: http_fetch " + req.URL.Redacted() + ": response over " + strconv.Itoa(lim.MaxResponseBytes) + " bytes")
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
