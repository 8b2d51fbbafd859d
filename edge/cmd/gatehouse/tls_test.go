package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/certs/pebbletest"
)

// tlsAddrs reads the https and http listeners' addresses from what serve printed.
func tlsAddrs(t *testing.T, p *proc) (https, http string) {
	t.Helper()
	for _, l := range p.stdout {
		if _, a, ok := strings.Cut(l, ") on "); ok && strings.HasPrefix(l, "HTTPS (tls.mode") {
			https = a
		}
		if a, ok := strings.CutPrefix(l, "HTTP challenges and redirects to https on "); ok {
			http = a
		}
	}
	if https == "" || http == "" {
		t.Fatalf("serve did not print its https and http addresses: %q", p.stdout)
	}
	return https, http
}

// httpsClient is a client that reaches every name at addr (a loopback address standing for
// the names' DNS), verifying the certificates against roots with the name as SNI.
func httpsClient(addr string, roots *x509.CertPool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, url, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestHTTPSAtTheEdge runs the real gateway with tls.mode acme against pebble: the configured
// name is served over HTTPS (with HSTS), a tenant domain gets its certificate at its first
// handshake and reaches its project's API only, an unlisted name gets none, the http listener
// redirects with 308, plain listen still answers, /metrics counts the certificates; restarted
// with the CA gone, the gateway serves the stored certificates.
func TestHTTPSAtTheEdge(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{})
	roots := ca.Roots()
	dir := t.TempDir()
	demo, err := os.ReadFile("../../../configs/demo.tenants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(demo), "        name: Demo site\n",
		"        name: Demo site\n        domains: [{host: api.customer.test, serves: api}]\n", 1)
	tenants := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GATEHOUSE_TLS_MODE=acme", "GATEHOUSE_TLS_HTTPS_LISTEN=127.0.0.1:0", "GATEHOUSE_TLS_HTTP_LISTEN=127.0.0.1:0",
		"GATEHOUSE_TLS_DOMAINS=gw.gatehouse.test", "GATEHOUSE_TLS_CA=" + ca.Directory, "GATEHOUSE_TLS_CA_ROOT=" + ca.CARoot,
		"GATEHOUSE_TLS_EMAIL=ops@gatehouse.test", "GATEHOUSE_TLS_HSTS=true"}
	data := filepath.Join(dir, "data")
	p := startProcEnv(t, env, "--data", data, "--tenants", tenants)
	httpsAddr, httpAddr := tlsAddrs(t, p)
	c := httpsClient(httpsAddr, roots)

	// The configured name: obtained in the background at start; a handshake waits for it.
	var res *http.Response
	var body string
	awaitFor(t, 2*time.Minute, "the certificate of gw.gatehouse.test", func() bool {
		r, err := c.Get("https://gw.gatehouse.test/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		res = r
		return r.StatusCode == 200
	})
	if res.Header.Get("Strict-Transport-Security") == "" {
		t.Error("tls.hsts: no Strict-Transport-Security on an https answer")
	}
	gw := res.TLS.PeerCertificates[0]

	// A tenant domain: on demand, its project's API only.
	records := "https://api.customer.test/records/projects/demo/collections/posts/records?limit=1"
	if res, body = get(t, c, records, "pk_live_demo_web"); res.StatusCode != 200 || !strings.Contains(body, `"items":[`) {
		t.Fatalf("records on the tenant domain = %d %s", res.StatusCode, body)
	}
	api := res.TLS.PeerCertificates[0]
	for _, tc := range []struct{ url, key string }{
		{"https://api.customer.test/records/projects/docs/collections/posts/records", "pk_live_docs_web"},
		{records, "pk_live_docs_web"},
		{"https://api.customer.test/metrics", ""},
		{"https://api.customer.test/admin/v1/projects", ""},
	} {
		if res, body = get(t, c, tc.url, tc.key); res.StatusCode != 404 && res.StatusCode != 403 {
			t.Errorf("GET %s with %q on the tenant domain = %d %s, want 403 or 404", tc.url, tc.key, res.StatusCode, body)
		}
	}
	if _, err := c.Get("https://evil.test/healthz"); err == nil {
		t.Error("an unlisted name got a certificate")
	}

	// The http listener: 308 to https; plain listen as before, with the counts.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, "http://"+httpAddr+"/forms/forms/contact/submit?x=1", nil)
	req.Host = "gw.gatehouse.test"
	r, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	_, port, _ := net.SplitHostPort(httpsAddr)
	if want := "https://gw.gatehouse.test:" + port + "/forms/forms/contact/submit?x=1"; r.StatusCode != 308 || r.Header.Get("Location") != want {
		t.Errorf("http listener = %d %q, want 308 %q", r.StatusCode, r.Header.Get("Location"), want)
	}
	if res, body = get(t, http.DefaultClient, p.url+"/metrics", ""); !strings.Contains(body, "gatehouse_tls_certificates_obtained_total 2") ||
		!strings.Contains(body, "gatehouse_tls_on_demand_refused_total 1") {
		t.Errorf("/metrics on listen lacks the certificate counts:\n%s", grepLines(body, "gatehouse_tls_"))
	}

	// Restart with the CA gone: the stored certificates are served.
	p.stop(t)
	ca.Stop()
	p = startProcEnv(t, env, "--data", data)
	httpsAddr, _ = tlsAddrs(t, p)
	c = httpsClient(httpsAddr, roots)
	for _, tc := range []struct {
		url  string
		want *x509.Certificate
	}{{"https://gw.gatehouse.test/healthz", gw}, {"https://api.customer.test/records/projects/demo/collections/posts/records?limit=1", api}} {
		res, body := get(t, c, tc.url, "pk_live_demo_web")
		if res.StatusCode != 200 || res.TLS.PeerCertificates[0].SerialNumber.Cmp(tc.want.SerialNumber) != 0 {
			t.Errorf("after the restart without the CA, %s = %d %s with serial %v, want the stored %v", tc.url, res.StatusCode, body, res.TLS.PeerCertificates[0].SerialNumber, tc.want.SerialNumber)
		}
	}
	p.stop(t)
}
