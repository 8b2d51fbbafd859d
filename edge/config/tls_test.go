package config

import (
	"strings"
	"testing"
)

// TestTLSValidate checks the tls section's rules (decisions.md 9.4).
func TestTLSValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" when valid
	}{
		{"default off", func(*Config) {}, ""},
		{"acme", func(c *Config) { c.TLS.Mode, c.TLS.Domains = TLSACME, []string{"api.example.com"} }, ""},
		{"acme without listen", func(c *Config) { c.TLS.Mode, c.Listen = TLSACME, "" }, ""},
		{"files", func(c *Config) { c.TLS.Mode, c.TLS.CertFile, c.TLS.KeyFile = TLSFiles, "c.pem", "k.pem" }, ""},
		{"unknown mode", func(c *Config) { c.TLS.Mode = "on" }, "tls.mode must be off, acme or files"},
		{"files without files", func(c *Config) { c.TLS.Mode = TLSFiles }, "tls.cert_file and tls.key_file are required"},
		{"acme bad domain", func(c *Config) { c.TLS.Mode, c.TLS.Domains = TLSACME, []string{"API.example.com"} }, "tls.domains[0]"},
		{"acme plain ca", func(c *Config) { c.TLS.Mode, c.TLS.CA = TLSACME, "http://ca.example/dir" }, "https:// ACME directory"},
		{"acme no https_listen", func(c *Config) { c.TLS.Mode, c.TLS.HTTPSListen = TLSACME, "" }, "tls.https_listen is required"},
		{"nothing served", func(c *Config) { c.Listen = "" }, "listen may be empty only with tls.mode acme or files"},
	} {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate() = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestIsHostname checks the names certificates may be obtained for.
func TestIsHostname(t *testing.T) {
	for in, want := range map[string]bool{
		"api.example.com": true, "a-b.c9.test": true, "xn--bcher-kva.example": true,
		"localhost": false, "API.example.com": false, "-a.example.com": false, "a-.example.com": false,
		"a..example.com": false, "a.example.com.": false, "a.example.com:443": false, "*.example.com": false,
		"": false, strings.Repeat("a", 64) + ".com": false,
	} {
		if got := IsHostname(in); got != want {
			t.Errorf("IsHostname(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzIsHostname: whatever IsHostname accepts is a lower-case name of dot-separated labels
// that a certificate and a Host header can carry as they stand.
func FuzzIsHostname(f *testing.F) {
	for _, s := range []string{"api.example.com", "a.b", "A.b", "a..b", "-a.b", "a_b.c", "xn--a.b", "a.b:80", "[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !IsHostname(s) {
			return
		}
		if len(s) > 253 || strings.ToLower(s) != s || strings.ContainsAny(s, ":/[]_* ") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
			t.Errorf("IsHostname(%q) = true for a name no certificate holds", s)
		}
	})
}
