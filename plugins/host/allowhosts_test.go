package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseAllowRule(t *testing.T) {
	ok := []struct {
		in   string
		want allowRule
	}{
		{"api.example.com", allowRule{host: "api.example.com"}},
		{"API.Example.com", allowRule{host: "api.example.com"}},
		{"api.example.com:8443", allowRule{host: "api.example.com", port: 8443}},
		{"*.example.com", allowRule{host: "example.com", wildcard: true}},
		{"*.example.com:444", allowRule{host: "example.com", wildcard: true, port: 444}},
		{"https://api.example.com", allowRule{scheme: "https", host: "api.example.com"}},
		{"https://api.example.com/", allowRule{scheme: "https", host: "api.example.com"}},
		{"https://api.example.com:8443", allowRule{scheme: "https", host: "api.example.com", port: 8443}},
		{"http://*.example.com", allowRule{scheme: "http", host: "example.com", wildcard: true}},
		{"[2001:db8::1]:443", allowRule{host: "2001:db8::1", addr: netip.MustParseAddr("2001:db8::1"), port: 443}},
		{"[2001:DB8:0::1]", allowRule{host: "2001:db8::1", addr: netip.MustParseAddr("2001:db8::1")}},
		{"https://[2001:db8::1]:8443", allowRule{scheme: "https", host: "2001:db8::1", addr: netip.MustParseAddr("2001:db8::1"), port: 8443}},
		{"203.0.113.7:8080", allowRule{host: "203.0.113.7", addr: netip.MustParseAddr("203.0.113.7"), port: 8080}},
		{"localhost", allowRule{host: "localhost"}},
	}
	for _, tc := range ok {
		got, err := parseAllowRule(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseAllowRule(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"", " ", "*", "*.com", "*.", "**.example.com", "a.*.example.com", "api.*", "ftp://api.example.com",
		"https://", "https://api.example.com/path", "api.example.com?x", "user@api.example.com",
		"api.example.com:", "api.example.com:0", "api.example.com:65536", "api.example.com:08",
		"api.example.com:http", "2001:db8::1", "[2001:db8::1", "[2001:db8::1]443", "[2001:db8::1]:",
		"[fe80::1%eth0]:443", "[10.0.0.1]:443", "[::ffff:10.0.0.1]", "-bad.example.com", "bad-.example.com",
		"exa_mple.com", "1.2.3", "api..example.com", "http://api.example.com#x", strings.Repeat("a", 64) + ".com",
	}
	for _, in := range bad {
		if r, err := parseAllowRule(in); err == nil {
			t.Errorf("parseAllowRule(%q) = %+v, want an error", in, r)
		}
	}
}

func TestAllowRuleMatches(t *testing.T) {
	cases := []struct {
		rule, url string
		want      bool
	}{
		{"api.example.com", "https://api.example.com/x", true},
		{"api.example.com", "http://api.example.com/x", true}, // no scheme in the rule: either
		{"api.example.com", "https://api.example.com:443/", true},
		{"api.example.com", "https://api.example.com:8443/", false},
		{"api.example.com", "http://api.example.com:443/", false}, // http's default is 80
		{"api.example.com", "https://API.EXAMPLE.COM/", true},
		{"api.example.com", "https://api.example.com./", true},
		{"api.example.com", "https://x.api.example.com/", false},
		{"api.example.com", "ftp://api.example.com/", false},
		{"api.example.com:8443", "https://api.example.com:8443/", true},
		{"api.example.com:8443", "http://api.example.com:8443/", true},
		{"api.example.com:8443", "https://api.example.com/", false},
		{"*.example.com", "https://a.example.com/", true},
		{"*.example.com", "https://a.b.example.com/", true},
		{"*.example.com", "https://example.com/", false},
		{"*.example.com", "https://badexample.com/", false},
		{"*.example.com", "https://a.example.com.evil.test/", false},
		{"https://api.example.com", "https://api.example.com/", true},
		{"https://api.example.com", "http://api.example.com/", false},
		{"https://api.example.com", "http://api.example.com:443/", false},
		{"http://api.example.com:8080", "http://api.example.com:8080/", true},
		{"http://api.example.com:8080", "https://api.example.com:8080/", false},
		{"[2001:db8::1]:443", "https://[2001:db8::1]/", true},
		{"[2001:db8::1]:443", "https://[2001:db8:0:0::1]:443/", true},
		{"[2001:db8::1]:443", "https://[2001:db8::2]/", false},
		{"[2001:db8::1]:443", "http://[2001:db8::1]/", false},
		{"203.0.113.7", "https://203.0.113.7/", true},
		{"203.0.113.7", "https://[::ffff:203.0.113.7]/", false},
	}
	for _, tc := range cases {
		r, err := parseAllowRule(tc.rule)
		if err != nil {
			t.Fatalf("parseAllowRule(%q): %v", tc.rule, err)
		}
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.allows(u); got != tc.want {
			t.Errorf("rule %q allows(%s) = %v, want %v", tc.rule, tc.url, got, tc.want)
		}
	}
}

// Every form of allowHosts entry lets a request out of the guest, and the
// connect-time address rules still refuse it when the name resolves to (or
// is) a loopback, private, or documentation address.
func TestAllowHostsPatternsMeetAddressRules(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	// Every name resolves to the test server's loopback address.
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	cases := []struct {
		rule, url string
		reached   string // verdict when loopback is allowed
	}{
		{"api.example.com:" + port, "http://api.example.com:" + port + "/", "FETCH_200"},
		{"*.example.com:" + port, "http://a.b.example.com:" + port + "/", "FETCH_200"},
		{"http://api.example.com:" + port, "http://api.example.com:" + port + "/", "FETCH_200"},
		{"https://api.example.com:" + port, "https://api.example.com:" + port + "/", "FETCH_FAILED"}, // TLS to a plain server
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port + "/", "FETCH_200"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			reg := Registration{Name: "fetcher", Hooks: []string{HookFormsSubmit}, AllowHosts: []string{tc.rule}}
			def := newHost(t, func(o *Options) { o.Egress = testEgress{lookup: lookup} })
			mustRegister(t, def, reg)
			before := hits.Load()
			if v, err := def.FormsSubmit(context.Background(), "demo", "contact", msg(tc.url)); err != nil || v.Code != "FETCH_DENIED" {
				t.Errorf("policy refusing loopback: fetch %s = %+v, %v; want FETCH_DENIED", tc.url, v, err)
			}
			if hits.Load() != before {
				t.Errorf("policy refusing loopback: the server was reached")
			}
			loop := newHost(t, func(o *Options) { o.Egress = testEgress{allow: loopbackOnly, lookup: lookup} })
			mustRegister(t, loop, reg)
			if v, err := loop.FormsSubmit(context.Background(), "demo", "contact", msg(tc.url)); err != nil || v.Code != tc.reached {
				t.Errorf("loopback allowed: fetch %s = %+v, %v; want %s", tc.url, v, err, tc.reached)
			}
		})
	}
	// An IPv6 literal in the documentation range matches its rule and is
	// refused when connecting, without any DNS.
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "fetcher", Hooks: []string{HookFormsSubmit}, AllowHosts: []string{"[2001:db8::1]:443"}})
	if v, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("https://[2001:db8::1]/")); err != nil || v.Code != "FETCH_DENIED" {
		t.Errorf("fetch https://[2001:db8::1]/ = %+v, %v; want FETCH_DENIED", v, err)
	}
}

// FuzzAllowRule: the parser never panics, and whatever it accepts matches
// a URL made of its own host and port.
func FuzzAllowRule(f *testing.F) {
	for _, s := range []string{"api.example.com", "api.example.com:8443", "*.example.com", "https://api.example.com",
		"http://10.0.0.1:8080", "[2001:db8::1]:443", "[::1]", "https://[2001:db8::1]", "*.a.b:1", "x:0", "[", "a:b:c", "http://", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseAllowRule(s)
		if err != nil {
			return
		}
		scheme := r.scheme
		if scheme == "" {
			scheme = "https"
		}
		host := r.host
		if r.wildcard {
			host = "sub." + host
		}
		if r.addr.Is6() {
			host = "[" + host + "]"
		}
		port := r.port
		if port == 0 {
			port = defaultPort(scheme)
		}
		u, perr := url.Parse(fmt.Sprintf("%s://%s:%d/", scheme, host, port))
		if perr != nil {
			t.Fatalf("parseAllowRule(%q) = %+v, whose URL does not parse: %v", s, r, perr)
		}
		if !r.allows(u) {
			t.Fatalf("parseAllowRule(%q) = %+v does not allow %s", s, r, u)
		}
	})
}
