package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gatehouse-dev/gatehouse/edge/certs/pebbletest"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// listed is a HostLookup over a fixed set of tenant domains.
type listed []string

func (l listed) Listed(_ context.Context, host string) (bool, error) {
	return slices.Contains(l, host), nil
}

func (l listed) Hosts(context.Context) ([]string, error) { return l, nil }

// hostSet is a HostLookup whose tenant domains a test changes (as applying a document would).
type hostSet struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostSet) Listed(_ context.Context, host string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.hosts, host), nil
}

func (h *hostSet) Hosts(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.hosts), nil
}

func (h *hostSet) set(hosts ...string) {
	h.mu.Lock()
	h.hosts = hosts
	h.mu.Unlock()
}

// node is one gateway's HTTPS in a test: a manager over db and a TLS listener serving "ok".
type node struct {
	m    *Manager
	reg  *prometheus.Registry
	addr string
}

// startNode starts a manager of the pebble CA over db, and an https listener using it.
func startNode(t *testing.T, ca *pebbletest.Server, db *store.DB, id string, domains []string, hosts HostLookup, renew time.Duration) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m, err := New(Options{Log: log, Config: config.TLS{Mode: config.TLSACME, CA: ca.Directory, CARoot: ca.CARoot, Domains: domains, Email: "ops@gatehouse.test"},
		DB: db, Node: lease.NewNode(id), Hosts: hosts, HTTPSAddr: ln.Addr().String(), Registerer: reg, RenewCheckInterval: renew, HandshakeTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(tls.NewListener(ln, m.TLSConfig())) }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = m.Stop(context.Background())
	})
	return &node{m: m, reg: reg, addr: ln.Addr().String()}
}

// cert awaits the certificate the node serves for name (obtained in the background).
func (n *node) cert(t *testing.T, name string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		c, err := pebbletest.Handshake(ctx, n.addr, name, roots)
		if err == nil {
			return c
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond): // the background issuance has no event to await from outside
		}
	}
	t.Fatalf("no certificate for %s: %v", name, last)
	return nil
}

// TestACMEIssuance: the configured name is obtained at start, a listed tenant domain at its
// first handshake, an unlisted name never (refused before the CA, counted); after a restart
// with the CA gone, the stored certificates are served.
func TestACMEIssuance(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{})
	roots := ca.Roots()
	db := storetest.OpenBackend(t, store.BackendBadger)
	n := startNode(t, ca, db, "a", []string{"api.gatehouse.test"}, listed{"img.customer.test"}, 0)

	api := n.cert(t, "api.gatehouse.test", roots)
	if !slices.Contains(api.DNSNames, "api.gatehouse.test") {
		t.Errorf("certificate names %v", api.DNSNames)
	}
	img, err := pebbletest.Handshake(context.Background(), n.addr, "img.customer.test", roots)
	if err != nil || !slices.Contains(img.DNSNames, "img.customer.test") {
		t.Fatalf("on demand for a listed tenant domain: %v %v", img, err)
	}
	if _, err := pebbletest.Handshake(context.Background(), n.addr, "evil.test", roots); err == nil {
		t.Fatal("a handshake naming an unlisted host got a certificate")
	}
	if got := value(n.m.metrics.refused); got != 1 {
		t.Errorf("refused = %v, want 1", got)
	}
	if got := value(n.m.metrics.obtained); got != 2 {
		t.Errorf("obtained = %v, want 2", got)
	}
	if strings.Contains(ca.Log(), "evil.test") {
		t.Error("the CA heard of the unlisted name")
	}

	ca.Stop()
	_ = n.m.Stop(context.Background())
	again := startNode(t, ca, db, "a", []string{"api.gatehouse.test"}, listed{"img.customer.test"}, 0)
	for name, want := range map[string]*x509.Certificate{"api.gatehouse.test": api, "img.customer.test": img} {
		got := again.cert(t, name, roots)
		if got.SerialNumber.Cmp(want.SerialNumber) != 0 {
			t.Errorf("after the restart without the CA, %s serves serial %v, want the stored %v", name, got.SerialNumber, want.SerialNumber)
		}
	}
	if got := value(again.m.metrics.obtained); got != 0 {
		t.Errorf("the restarted node obtained %v certificates, want 0", got)
	}
}

// TestRenewal: certificates of 30 seconds are renewed before they expire (certmagic renews in
// the last third of a certificate's life), and the renewal is counted.
func TestRenewal(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{Validity: 30 * time.Second})
	roots := ca.Roots()
	db := storetest.OpenBackend(t, store.BackendBadger)
	n := startNode(t, ca, db, "a", []string{"short.gatehouse.test"}, nil, time.Second)
	first := n.cert(t, "short.gatehouse.test", roots)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for value(n.m.metrics.renewals) < 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("no renewal before the deadline (failures %v):\n%s", value(n.m.metrics.failures), ca.Log())
		case <-time.After(200 * time.Millisecond): // renewal runs on certmagic's own clock
		}
	}
	got := n.cert(t, "short.gatehouse.test", roots)
	if got.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Error("the renewed certificate is not served")
	}
	if !got.NotAfter.After(first.NotAfter) {
		t.Errorf("renewed certificate expires %v, not after the first's %v", got.NotAfter, first.NotAfter)
	}
}

// TestOnDemandRenewedInBackground: a tenant domain's certificate (30 seconds, obtained on
// demand) is renewed before it expires with no handshake asking for it; a node started later
// on the same store loads it (to renew it) before any handshake names it; once no document
// lists the host, the node drops it and refuses its handshakes.
func TestOnDemandRenewedInBackground(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{Validity: 30 * time.Second})
	roots := ca.Roots()
	db := storetest.OpenBackend(t, store.BackendBadger)
	const host = "img.customer.test"
	hosts := &hostSet{hosts: []string{host}}
	n := startNode(t, ca, db, "a", nil, hosts, time.Second)
	first, err := pebbletest.Handshake(context.Background(), n.addr, host, roots)
	if err != nil {
		t.Fatalf("on demand: %v", err)
	}
	// No handshake from here on: the renewal is the background's.
	await(t, "a background renewal of the on-demand certificate", func() bool { return value(n.m.metrics.renewals) >= 1 }, ca)
	got, err := pebbletest.Handshake(context.Background(), n.addr, host, roots)
	if err != nil {
		t.Fatal(err)
	}
	if got.SerialNumber.Cmp(first.SerialNumber) == 0 || !got.NotAfter.After(first.NotAfter) {
		t.Errorf("after the renewal the node serves serial %v expiring %v, the first was %v expiring %v", got.SerialNumber, got.NotAfter, first.SerialNumber, first.NotAfter)
	}
	_ = n.m.Stop(context.Background())

	again := startNode(t, ca, db, "a", nil, hosts, time.Second)
	await(t, "the restarted node loading the stored certificate without a handshake", func() bool { return again.cached(host) }, ca)

	hosts.set() // the document no longer lists the host
	again.m.Changed(context.Background(), []journal.Change{{Op: "deleted", Kind: kindDomain, Name: host}})
	await(t, "the unlisted host's certificate dropped", func() bool { return !again.cached(host) }, ca)
	if _, err := pebbletest.Handshake(context.Background(), again.addr, host, roots); err == nil {
		t.Error("a handshake for a host no longer listed got its stored certificate")
	}
}

// cached reports whether the node's certificate cache holds one for name.
func (n *node) cached(name string) bool {
	n.m.mu.Lock()
	cache := n.m.cache
	n.m.mu.Unlock()
	return cache != nil && len(cache.AllMatchingCertificates(name)) > 0
}

// await polls cond (what it waits for happens on certmagic's own clock, with no event to
// await from outside) for up to two minutes.
func await(t *testing.T, what string, cond func() bool, ca *pebbletest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not before the deadline; the CA's log:\n%s", what, ca.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestCAErrorsCounted: a CA that cannot be reached is logged and counted as a failure; the
// manager keeps running.
func TestCAErrorsCounted(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{})
	ca.Stop()
	db := storetest.OpenBackend(t, store.BackendBadger)
	n := startNode(t, ca, db, "a", nil, listed{"img.customer.test"}, 0)
	if _, err := pebbletest.Handshake(context.Background(), n.addr, "img.customer.test", nil); err == nil {
		t.Fatal("a handshake got a certificate with the CA down")
	}
	if got := value(n.m.metrics.failures); got < 1 {
		t.Errorf("failures = %v, want at least 1", got)
	}
}

// TestTwoNodesShareCertificates: two nodes on one postgres database asked for the same names
// at once: one obtains each certificate, both serve it.
func TestTwoNodesShareCertificates(t *testing.T) {
	ca := pebbletest.Start(t, pebbletest.Options{})
	roots := ca.Roots()
	url := pgtest.URL(t)
	open := func() *store.DB {
		db, err := store.Open(store.Options{Backend: store.BackendPostgres, PostgresURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	tenants := listed{"img.customer.test"}
	a := startNode(t, ca, open(), "a", []string{"api.gatehouse.test"}, tenants, 0)
	b := startNode(t, ca, open(), "b", []string{"api.gatehouse.test"}, tenants, 0)
	for _, name := range []string{"api.gatehouse.test", "img.customer.test"} {
		got := make(chan *x509.Certificate, 2)
		for _, n := range []*node{a, b} {
			go func() { got <- n.cert(t, name, roots) }()
		}
		ca, cb := <-got, <-got
		if ca.SerialNumber.Cmp(cb.SerialNumber) != 0 {
			t.Errorf("%s: the nodes serve different certificates (%v, %v)", name, ca.SerialNumber, cb.SerialNumber)
		}
	}
	total := value(a.m.metrics.obtained) + value(b.m.metrics.obtained)
	if total != 2 {
		t.Errorf("the two nodes obtained %v certificates for two names, want 2", total)
	}
}

// TestRedirect: the http listener answers 308 to the same URL on https (the https port kept
// when not 443).
func TestRedirect(t *testing.T) {
	m, err := New(Options{Config: config.TLS{Mode: config.TLSFiles}, HTTPSAddr: "127.0.0.1:8443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ host, target, want string }{
		{"api.example.com", "/records/x?y=1", "https://api.example.com:8443/records/x?y=1"},
		{"api.example.com:80", "/", "https://api.example.com:8443/"},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "http://"+tc.host+tc.target, nil)
		m.HTTPHandler().ServeHTTP(w, r)
		if w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != tc.want {
			t.Errorf("redirect of %s%s = %d %q, want 308 %q", tc.host, tc.target, w.Code, w.Header().Get("Location"), tc.want)
		}
	}
	m443, _ := New(Options{Config: config.TLS{Mode: config.TLSFiles}, HTTPSAddr: ":443"})
	w := httptest.NewRecorder()
	m443.HTTPHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://a.example.com/p", nil))
	if w.Header().Get("Location") != "https://a.example.com/p" {
		t.Errorf("redirect to port 443 = %q", w.Header().Get("Location"))
	}
}

// value reads a counter.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
