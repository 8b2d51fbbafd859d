// Package pebbletest gives tests a real ACME CA: Debian's pebble (Let's Encrypt's test CA)
// started privately on free loopback ports, with a throwaway TLS certificate made here for its
// directory, and PEBBLE_VA_ALWAYS_VALID=1 so that it takes every challenge as passed without
// connecting back (the test's names point nowhere). It is stopped when the test ends.
//
// Without the pebble binary the test is skipped, saying how to install it, except under make
// (GATEHOUSE_REQUIRE_PEBBLE=1, set by mk/tls.mk), where a missing pebble fails it.
package pebbletest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running pebble.
type Server struct {
	// Directory is the ACME directory URL (https://127.0.0.1:PORT/dir).
	Directory string
	// CARoot is the PEM file of the root that signed pebble's own TLS certificate (the
	// gateway's tls.ca_root).
	CARoot string

	t       testing.TB
	dir     string
	mgmt    string
	client  *http.Client
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	log     *syncBuffer
	config  string
	stopped bool
}

// Options tune the CA.
type Options struct {
	// Validity is the lifetime of the certificates it issues (pebble's default: 5 years).
	Validity time.Duration
}

// Start starts a pebble for t, stopped at t's cleanup.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("pebble")
	if err != nil {
		if os.Getenv("GATEHOUSE_REQUIRE_PEBBLE") == "1" {
			t.Fatal("pebbletest: pebble is not installed (apt-get install pebble)")
		}
		t.Skip("pebbletest: pebble (the ACME test CA) is not installed: apt-get install pebble (make test does)")
	}
	dir := t.TempDir()
	s := &Server{t: t, dir: dir, log: &syncBuffer{}}
	caPEM, certPEM, keyPEM := throwawayTLS(t)
	s.CARoot = filepath.Join(dir, "ca-root.pem")
	for name, b := range map[string][]byte{"ca-root.pem": caPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	listen, mgmt := freeAddr(t), freeAddr(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  listen,
		"managementListenAddress":        mgmt,
		"certificate":                    filepath.Join(dir, "cert.pem"),
		"privateKey":                     filepath.Join(dir, "key.pem"),
		"httpPort":                       portOf(freeAddr(t)),
		"tlsPort":                        portOf(freeAddr(t)),
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
		"certificateValidityPeriod":      uint64(o.Validity / time.Second),
	}}
	raw, _ := json.Marshal(cfg)
	s.config = filepath.Join(dir, "pebble-config.json")
	if err := os.WriteFile(s.config, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s.Directory = "https://" + listen + "/dir"
	s.mgmt = "https://" + mgmt
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	s.start(bin)
	t.Cleanup(s.Stop)
	return s
}

// start runs pebble and waits for the line saying its directory is served.
func (s *Server) start(bin string) {
	s.t.Helper()
	cmd := exec.Command(bin, "-config", s.config)
	// Every challenge passes without a connection back; no random validation delays; no
	// nonces refused at random (certmagic retries them, but it slows the tests down).
	cmd.Env = append(os.Environ(), "PEBBLE_VA_ALWAYS_VALID=1", "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	exited := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			s.log.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "ACME directory available at") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-ready:
	case <-exited:
		s.t.Fatalf("pebbletest: pebble exited at start:\n%s", s.log.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		s.t.Fatalf("pebbletest: pebble did not start within a minute:\n%s", s.log.String())
	}
	s.mu.Lock()
	s.cmd, s.exited, s.stopped = cmd, exited, false
	s.mu.Unlock()
}

// Stop stops pebble (the CA is then unreachable). It is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.cmd == nil {
		return
	}
	s.stopped = true
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Log returns what pebble printed.
func (s *Server) Log() string { return s.log.String() }

// Roots returns the pool of pebble's issuing root: what verifies the certificates it issued.
// Pebble makes a new root at every start, so ask before stopping it.
func (s *Server) Roots() *x509.CertPool {
	s.t.Helper()
	pool := x509.NewCertPool()
	// The management interface starts beside the directory, a moment apart: a refused
	// connection is tried again for a few seconds.
	var res *http.Response
	var err error
	for try := 0; try < 50; try++ {
		if res, err = s.client.Get(s.mgmt + "/roots/0"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("pebbletest: root: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if !pool.AppendCertsFromPEM(raw) {
		s.t.Fatalf("pebbletest: root: %d %s", res.StatusCode, raw)
	}
	return pool
}

// throwawayTLS makes a CA and a certificate for 127.0.0.1 and localhost that it signed.
func throwawayTLS(t testing.TB) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pebbletest root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pebble"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost", "pebble"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	var n int
	fmt.Sscan(p, &n)
	return n
}

// Handshake dials addr (a loopback address standing for name) with SNI name and returns the
// certificate the server presented, verified against roots.
func Handshake(ctx context.Context, addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := tls.Dialer{Config: &tls.Config{ServerName: name, RootCAs: roots, NextProtos: []string{"http/1.1"}}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// syncBuffer is a bytes buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
