package main

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/certs/pebbletest"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestHTTPSTwoNodesOnPostgres runs two real gateways with tls.mode acme on one PostgreSQL
// database (each with its own data folder, so its own node id): the first obtains the
// configured name's certificate and a tenant domain's (on demand) from pebble; the second,
// started after, serves the same certificates (same serial) without asking the CA (its
// /metrics count no issuance, and pebble issued no more); then both are asked at once for a
// second tenant domain: the lock in the database makes one of them obtain it, and both serve
// that one certificate. Once a document applied on one node no longer lists a domain, both
// refuse its handshakes.
func TestHTTPSTwoNodesOnPostgres(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{})
	roots := ca.Roots()
	url := pgtest.URL(t)
	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants.yaml")
	doc := `orgs:
  - slug: acme
    projects:
      - id: shop
        keys:
          - {name: web, value: pk_live_shop_web, products: [records]}
        domains: [{host: api.customer.test, serves: api}, {host: img.customer.test, serves: assets}]
`
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=" + url, "GATEHOUSE_FILES_LOCAL_SHARED=true",
		"GATEHOUSE_TLS_MODE=acme", "GATEHOUSE_TLS_HTTPS_LISTEN=127.0.0.1:0", "GATEHOUSE_TLS_HTTP_LISTEN=127.0.0.1:0",
		"GATEHOUSE_TLS_DOMAINS=gw.gatehouse.test", "GATEHOUSE_TLS_CA=" + ca.Directory, "GATEHOUSE_TLS_CA_ROOT=" + ca.CARoot,
		"GATEHOUSE_TLS_EMAIL=ops@gatehouse.test"}

	// serial awaits the certificate node p serves for host (obtained in the background, or
	// at the handshake).
	serial := func(p *proc, host string) *x509.Certificate {
		t.Helper()
		https, _ := tlsAddrs(t, p)
		c := httpsClient(https, roots)
		var cert *x509.Certificate
		awaitFor(t, 2*time.Minute, "the certificate of "+host, func() bool {
			res, err := c.Get("https://" + host + "/healthz")
			if err != nil {
				return false
			}
			res.Body.Close()
			cert = res.TLS.PeerCertificates[0]
			return true
		})
		return cert
	}

	a := startProcEnv(t, env, "--data", filepath.Join(dir, "a"), "--tenants", tenants)
	gw, api := serial(a, "gw.gatehouse.test"), serial(a, "api.customer.test")
	if got := obtained(t, a); got != 2 {
		t.Fatalf("the first node obtained %d certificates, want 2", got)
	}
	issued := issuedBy(ca)
	if issued != 2 {
		t.Fatalf("pebble issued %d certificates, want 2", issued)
	}

	b := startProcEnv(t, env, "--data", filepath.Join(dir, "b"))
	for host, want := range map[string]*x509.Certificate{"gw.gatehouse.test": gw, "api.customer.test": api} {
		if got := serial(b, host); got.SerialNumber.Cmp(want.SerialNumber) != 0 {
			t.Errorf("the second node serves %s with serial %v, want the first node's %v", host, got.SerialNumber, want.SerialNumber)
		}
	}
	if got := obtained(t, b); got != 0 {
		t.Errorf("the second node obtained %d certificates, want 0 (the stored ones served)", got)
	}
	if got := issuedBy(ca); got != issued {
		t.Errorf("pebble issued %d certificates after the second node started, want still %d", got, issued)
	}

	// Both asked at once for a host neither has a certificate for: one obtains it.
	got := make(chan *x509.Certificate, 2)
	for _, p := range []*proc{a, b} {
		go func() { got <- serial(p, "img.customer.test") }()
	}
	ia, ib := <-got, <-got
	if ia.SerialNumber.Cmp(ib.SerialNumber) != 0 {
		t.Errorf("the nodes serve img.customer.test with different certificates (%v, %v)", ia.SerialNumber, ib.SerialNumber)
	}
	if total := obtained(t, a) + obtained(t, b); total != 3 {
		t.Errorf("the two nodes obtained %d certificates for three names, want 3", total)
	}
	if got := issuedBy(ca); got != 3 {
		t.Errorf("pebble issued %d certificates for three names, want 3", got)
	}

	// A document that no longer lists img.customer.test, applied on the second node: both
	// refuse its handshakes, the first once the change reached it through the database.
	pruned := "prune: true\n" + strings.Replace(doc, ", {host: img.customer.test, serves: assets}", "", 1)
	if code, body := b.admin(t, "POST", "/apply", pruned); code != 200 {
		t.Fatalf("apply = %d %s", code, body)
	}
	for i, p := range []*proc{a, b} {
		https, _ := tlsAddrs(t, p)
		c := httpsClient(https, roots)
		c.Transport.(*http.Transport).DisableKeepAlives = true // a handshake per request
		awaitFor(t, time.Minute, fmt.Sprintf("node %d refusing the host no longer listed", i), func() bool {
			res, err := c.Get("https://img.customer.test/healthz")
			if err == nil {
				res.Body.Close()
			}
			return err != nil
		})
	}
	a.stop(t)
	b.stop(t)
}

var obtainedRe = regexp.MustCompile(`(?m)^gatehouse_tls_certificates_obtained_total (\d+)$`)

// obtained reads gatehouse_tls_certificates_obtained_total from the node's /metrics.
func obtained(t *testing.T, p *proc) int {
	t.Helper()
	_, body := get(t, http.DefaultClient, p.url+"/metrics", "")
	m := obtainedRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no gatehouse_tls_certificates_obtained_total:\n%s", grepLines(body, "gatehouse_tls_"))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// issuedBy counts the certificates pebble issued (one log line each).
func issuedBy(ca *pebbletest.Server) int {
	return strings.Count(ca.Log(), "Issued certificate serial")
}
