package host

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// allowRule is one parsed allowHosts entry (decisions.md 8.5). The forms:
//
//	api.example.com            http or https, on the scheme's default port
//	api.example.com:8443       http or https, on port 8443
//	*.example.com[:port]       any subdomain of example.com (not example.com itself)
//	https://api.example.com    the scheme is pinned: https only, port 443
//	http://10.0.0.5:8080       http only, port 8080 (the address rules still apply)
//	[2001:db8::1]:443          an IPv6 literal, in brackets; IPv4 literals as they are
//
// Matching a rule only lets the request leave the guest: every address the
// host name resolves to is still checked when connecting (Options.Egress).
type allowRule struct {
	scheme   string     // "http", "https", or "" for either
	host     string     // lower-case name without the "*." of a wildcard
	addr     netip.Addr // set when the host is an IP literal
	wildcard bool       // host matches subdomains only
	port     int        // 0: the scheme's default port
}

// parseAllowRule parses one allowHosts entry; the error says what is wrong.
func parseAllowRule(s string) (allowRule, error) {
	var r allowRule
	bad := func(why string) (allowRule, error) { return r, fmt.Errorf("%q: %s", s, why) }
	rest := strings.ToLower(strings.TrimSpace(s))
	if scheme, after, ok := strings.Cut(rest, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return bad("scheme must be http or https")
		}
		r.scheme, rest = scheme, after
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.ContainsAny(rest, "/?#@ \t\\%") {
		return bad("want host, host:port, *.domain, scheme://host[:port] or [IPv6]:port (no path, query or user)")
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad("unclosed [ of an IPv6 address")
		}
		host, port = rest[1:end], rest[end+1:]
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" || a.Is4In6() {
			return bad("[" + host + "] is not an IPv6 address")
		}
		r.addr, r.host = a, a.String()
		if port != "" {
			p, ok := strings.CutPrefix(port, ":")
			if !ok {
				return bad("text after ]")
			}
			port = p
			if port == "" {
				return bad("empty port")
			}
		}
	} else {
		if strings.Count(rest, ":") > 1 {
			return bad("an IPv6 address goes in brackets: [2001:db8::1]:443")
		}
		if h, p, ok := strings.Cut(rest, ":"); ok {
			if p == "" {
				return bad("empty port")
			}
			host, port = h, p
		}
		if a, err := netip.ParseAddr(host); err == nil {
			r.addr, r.host = a, a.String()
		} else {
			if w, ok := strings.CutPrefix(host, "*."); ok {
				if !strings.Contains(w, ".") {
					return bad("a wildcard needs a domain of at least two labels (*.example.com)")
				}
				r.wildcard, host = true, w
			}
			if !validHostName(host) {
				return bad("not a host name")
			}
			r.host = host
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return bad("port must be 1-65535")
		}
		r.port = n
	}
	return r, nil
}

// validHostName reports whether s is a DNS name: dot-separated labels of
// letters, digits and inner hyphens, each 1-63 bytes, 253 in all. A name
// made only of digits and dots is refused (it would be an IPv4 typo).
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	letters := false
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c == '-':
				letters = true
			case c >= '0' && c <= '9':
			default:
				return false
			}
		}
	}
	return letters
}

func defaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

// allows reports whether the URL's scheme, host and port match the rule.
func (r allowRule) allows(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if r.scheme != "" && u.Scheme != r.scheme {
		return false
	}
	port := defaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		port = n
	}
	want := r.port
	if want == 0 {
		want = defaultPort(u.Scheme)
	}
	if port != want {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if r.addr.IsValid() {
		a, err := netip.ParseAddr(host)
		return err == nil && a == r.addr
	}
	if r.wildcard {
		return strings.HasSuffix(host, "."+r.host)
	}
	return host == r.host
}
