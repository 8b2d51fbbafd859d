// Package egress is the one outbound-connection policy of the gateway (decisions.md 8.3):
// webhook deliveries, SMTP delivery, captcha provider calls and plugin http_fetch (the plugin
// host is given the Policy as its host.Egress by the composition root) all connect through a
// Policy.
//
// The check runs at connect time, in the dialer's Control hook, on the address actually
// dialled after DNS: a name that resolves (or re-resolves) to 127.0.0.1 is refused like the
// literal, and so is every hop of a redirect, since each hop dials again. Refused are
// loopback, private (RFC 1918, IPv6 unique local), carrier-grade NAT, link-local (which holds
// the cloud metadata addresses 169.254.169.254 and fd00:ec2::254's range), multicast,
// documentation and reserved ranges, in IPv4 and IPv6, including IPv4 mapped into IPv6 or
// NAT64. Config `egress.allow_private_networks: true` lifts the address rule (tests and
// private deployments); timeouts and the response size cap still apply.
//
//	p := egress.New(egress.Options{})
//	resp, err := p.Client().Do(req)          // refused: errors.Is(err, egress.ErrRefused)
//	body, err := egress.ReadBody(resp.Body, p.MaxResponseBytes())
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Sentinel errors of the package.
var (
	// ErrRefused reports a connection to an address the policy refuses.
	ErrRefused = errors.New("egress: address refused")
	// ErrTooLarge reports a response body over the size cap.
	ErrTooLarge = errors.New("egress: response too large")
	// ErrTooManyRedirects reports a redirect chain longer than Options.MaxRedirects.
	ErrTooManyRedirects = errors.New("egress: too many redirects")
	// ErrScheme reports a URL (or redirect) that is not http or https, or carries credentials.
	ErrScheme = errors.New("egress: only http and https URLs without credentials")
)

// Options configures New; zero values take the defaults in brackets.
type Options struct {
	// AllowPrivateNetworks lifts the address rule (config egress.allow_private_networks).
	AllowPrivateNetworks bool
	// DialTimeout bounds one TCP connect [10 s].
	DialTimeout time.Duration
	// Timeout bounds a whole HTTP exchange, redirects and body included [30 s].
	Timeout time.Duration
	// MaxResponseBytes caps a response body read with ReadBody [1 MiB].
	MaxResponseBytes int64
	// MaxRedirects caps the redirects an HTTP client follows [5].
	MaxRedirects int
	// Resolver resolves names (net.DefaultResolver when nil).
	Resolver *net.Resolver
	// AllowAddr replaces the address rule (Public, or everything with AllowPrivateNetworks)
	// when set: tests use it to admit one loopback address and refuse its neighbours.
	AllowAddr func(netip.Addr) bool
}

// Policy is an egress policy; it is safe for concurrent use and holds no connections itself
// (each Client owns its own connection pool).
type Policy struct {
	o      Options
	dialer *net.Dialer
}

// New returns the policy described by o.
func New(o Options) *Policy {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 1 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	p := &Policy{o: o}
	p.dialer = &net.Dialer{Timeout: o.DialTimeout, Resolver: o.Resolver, Control: p.control}
	return p
}

// control is the dialer's Control hook: it sees the resolved address of every connect.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefused, address)
	}
	if !p.Allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrRefused, ap.Addr())
	}
	return nil
}

// Allowed reports whether the policy lets a connection reach a.
func (p *Policy) Allowed(a netip.Addr) bool {
	if p.o.AllowAddr != nil {
		return p.o.AllowAddr(a.Unmap())
	}
	return p.o.AllowPrivateNetworks || Public(a)
}

// AllowsPrivateNetworks reports whether the address rule is lifted.
func (p *Policy) AllowsPrivateNetworks() bool { return p.o.AllowPrivateNetworks }

// MaxResponseBytes is the response size cap for ReadBody.
func (p *Policy) MaxResponseBytes() int64 { return p.o.MaxResponseBytes }

// Refused reports whether err is the policy refusing a connection or URL: an address it
// refuses (ErrRefused), a scheme or credentials it refuses (ErrScheme).
func (p *Policy) Refused(err error) bool {
	return errors.Is(err, ErrRefused) || errors.Is(err, ErrScheme)
}

// Timeout is the bound of a whole HTTP exchange.
func (p *Policy) Timeout() time.Duration { return p.o.Timeout }

// DialContext connects like net.Dialer.DialContext, refusing addresses the policy refuses
// (errors.Is(err, ErrRefused)). Its signature fits http.Transport and go-mail's dial option.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := p.dialer.DialContext(ctx, network, address)
	if err != nil && errors.Is(err, ErrRefused) {
		// Keep the sentinel visible through net.OpError's wrapping for callers and logs.
		return nil, fmt.Errorf("%w (dial %s)", ErrRefused, address)
	}
	return c, err
}

// Client returns a new HTTP client whose every connection goes through DialContext, which
// never uses an environment proxy, re-checks each redirect (scheme, credentials, count, and
// the address again at its connect) and bounds the whole exchange by Options.Timeout.
func (p *Policy) Client() *http.Client {
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would connect on our behalf, past the policy
		DialContext:            p.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    p.o.DialTimeout,
		ResponseHeaderTimeout:  p.o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{Transport: tr, Timeout: p.o.Timeout, CheckRedirect: p.checkRedirect}
}

// CheckURL refuses a URL that is not http(s), carries credentials, or names an IP literal the
// policy refuses (names are checked when they are dialled). Every redirect the Client follows
// is checked with it before its connection is even attempted.
func (p *Policy) CheckURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Host == "" {
		return ErrScheme
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil && !p.Allowed(a) {
		return fmt.Errorf("%w: %s is not a public address", ErrRefused, a)
	}
	return nil
}

// resolveTimeout bounds the DNS lookup of CheckTarget.
const resolveTimeout = 3 * time.Second

// CheckTarget is CheckURL for a target configured ahead of its use (a webhook endpoint in the
// tenants document): a host name is also resolved now, and refused (ErrRefused) when an address
// it resolves to is one the policy refuses, so an operator hears of it at apply rather than at
// the first delivery. A name that does not resolve now is not refused: it may later. The
// connect-time check stays the rule, since DNS answers change.
func (p *Policy) CheckTarget(ctx context.Context, u *url.URL) error {
	if err := p.CheckURL(u); err != nil {
		return err
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || p.o.AllowAddr == nil && p.o.AllowPrivateNetworks {
		return nil // a literal CheckURL checked, or no address rule to check against
	}
	r := p.o.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if !p.Allowed(a) {
			return fmt.Errorf("%w: %s resolves to %s, which is not a public address", ErrRefused, host, a.Unmap())
		}
	}
	return nil
}

func (p *Policy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > p.o.MaxRedirects {
		return ErrTooManyRedirects
	}
	return p.CheckURL(req.URL)
}

// ReadBody reads r up to max bytes; a longer body is ErrTooLarge.
func ReadBody(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, ErrTooLarge
	}
	return b, nil
}
