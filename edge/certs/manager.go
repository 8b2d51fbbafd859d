package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// HostLookup says whether a tenants document lists host (the on-demand decision).
type HostLookup interface {
	Listed(ctx context.Context, host string) (bool, error)
}

// Options configures New.
type Options struct {
	// Config is the tls section; Mode off makes a Manager that serves nothing.
	Config config.TLS
	// DB keeps certificates, keys, the ACME account and the locks (mode acme).
	DB *store.DB
	// Node names this process among those sharing DB (the holder of its locks).
	Node *lease.Node
	// Hosts decides which names beyond Config.Domains get certificates on demand; nil: none.
	Hosts HostLookup
	// HTTPAddr and HTTPSAddr are the addresses the http and https listeners are bound to
	// (their ports are where this node answers ACME challenges).
	HTTPAddr, HTTPSAddr string
	Log                 *slog.Logger
	Registerer          prometheus.Registerer
	// RenewCheckInterval is how often certificates are checked for renewal (default 10
	// minutes; tests with short-lived certificates shorten it).
	RenewCheckInterval time.Duration
	// HandshakeTimeout bounds how long a handshake waits for an on-demand issuance (default
	// a minute).
	HandshakeTimeout time.Duration
}

// Manager holds the gateway's certificates: Start loads or obtains them, TLSConfig serves
// them, Stop ends the renewals.
type Manager struct {
	o       Options
	log     *slog.Logger
	metrics *metrics
	storage *Storage

	mu     sync.Mutex
	magic  *certmagic.Config
	issuer *certmagic.ACMEIssuer
	cache  *certmagic.Cache
	files  *tls.Certificate
	cancel context.CancelFunc
}

// ErrNotListed refuses an on-demand certificate for a name no tenants document lists (and
// that tls.domains does not name).
var ErrNotListed = errors.New("certs: the name is not a domain the gateway serves")

// New returns the manager of o; nothing runs until Start.
func New(o Options) (*Manager, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = time.Minute
	}
	if o.Node == nil {
		o.Node = lease.NewNode("")
	}
	m := &Manager{o: o, log: o.Log.With("component", "tls"), metrics: newMetrics(o.Registerer)}
	if o.DB != nil {
		m.storage = NewStorage(o.DB, o.Node)
	}
	if o.Config.Mode == config.TLSACME && m.storage == nil {
		return nil, errors.New("certs: mode acme needs the store")
	}
	return m, nil
}

// Enabled reports whether the gateway serves HTTPS.
func (m *Manager) Enabled() bool {
	return m.o.Config.Mode == config.TLSACME || m.o.Config.Mode == config.TLSFiles
}

// Start loads the certificate files (mode files), or sets certmagic up over the store and
// begins managing tls.domains (mode acme): a stored certificate is served at once, a missing
// one is obtained in the background (a failure is logged and counted, and tried again).
func (m *Manager) Start(ctx context.Context) error {
	switch m.o.Config.Mode {
	case config.TLSFiles:
		c, err := tls.LoadX509KeyPair(m.o.Config.CertFile, m.o.Config.KeyFile)
		if err != nil {
			return fmt.Errorf("tls.cert_file/tls.key_file: %w", err)
		}
		m.mu.Lock()
		m.files = &c
		m.mu.Unlock()
		return nil
	case config.TLSACME:
		return m.startACME(ctx)
	}
	return nil
}

func (m *Manager) startACME(ctx context.Context) error {
	c := m.o.Config
	var roots *x509.CertPool
	if c.CARoot != "" {
		pem, err := os.ReadFile(c.CARoot)
		if err != nil {
			return fmt.Errorf("tls.ca_root: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls.ca_root %s holds no PEM certificate", c.CARoot)
		}
	}
	zl := zapLogger(m.log)
	// Two configurations over one cache: the names of tls.domains are managed (obtained at
	// start, renewed in the background), the tenant domains on demand (obtained at their first
	// handshake, renewed at a handshake once due: certmagic renews no on-demand certificate in
	// the background). A certificate's names say which one it belongs to.
	var managed, onDemand *certmagic.Config
	cache := certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(cert certmagic.Certificate) (*certmagic.Config, error) {
			for _, n := range cert.Names {
				if !slices.Contains(c.Domains, n) {
					return onDemand, nil
				}
			}
			return managed, nil
		},
		RenewCheckInterval: m.o.RenewCheckInterval,
		Logger:             zl,
	})
	var issuer *certmagic.ACMEIssuer
	for _, cfg := range []**certmagic.Config{&managed, &onDemand} {
		*cfg = certmagic.New(cache, certmagic.Config{Storage: m.storage, Logger: zl, OnEvent: m.onEvent})
		iss := certmagic.NewACMEIssuer(*cfg, certmagic.ACMEIssuer{
			CA:           c.CA,
			Email:        c.Email,
			Agreed:       true,
			TrustedRoots: roots,
			// The challenges are answered by this node's own listeners: certmagic, finding
			// the ports taken, starts no server of its own.
			ListenHost:           hostOf(m.o.HTTPSAddr),
			AltHTTPPort:          portOf(m.o.HTTPAddr),
			AltTLSALPNPort:       portOf(m.o.HTTPSAddr),
			DisableHTTPChallenge: m.o.HTTPAddr == "",
			Logger:               zl,
		})
		(*cfg).Issuers = []certmagic.Issuer{iss}
		if issuer == nil {
			issuer = iss // either answers the HTTP challenges: both read them from the store
		}
	}
	onDemand.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: m.decide}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.mu.Lock()
	m.magic, m.issuer, m.cache, m.cancel = onDemand, issuer, cache, cancel
	m.mu.Unlock()
	if len(c.Domains) > 0 {
		if err := managed.ManageAsync(mctx, c.Domains); err != nil {
			m.log.Error("managing tls.domains", "domains", c.Domains, "err", err)
			m.metrics.failures.Inc()
		}
	}
	return nil
}

// decide is certmagic's on-demand decision: a name of tls.domains, or a tenant domain a
// tenants document lists. Anything else is refused before the CA hears of it.
func (m *Manager) decide(ctx context.Context, name string) error {
	name = strings.ToLower(name)
	if slices.Contains(m.o.Config.Domains, name) {
		return nil
	}
	if m.o.Hosts != nil {
		ok, err := m.o.Hosts.Listed(ctx, name)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	m.metrics.refused.Inc()
	return fmt.Errorf("%w: %q", ErrNotListed, name)
}

// onEvent logs and counts what the CA answered.
func (m *Manager) onEvent(_ context.Context, event string, data map[string]any) error {
	renewal, _ := data["renewal"].(bool)
	name, _ := data["identifier"].(string)
	switch event {
	case "cert_obtaining":
		m.log.Info("obtaining a certificate", "name", name)
	case "cert_obtained":
		if renewal {
			m.metrics.renewals.Inc()
			m.log.Info("certificate renewed", "name", name)
		} else {
			m.metrics.obtained.Inc()
			m.log.Info("certificate obtained", "name", name)
		}
	case "cert_failed":
		m.metrics.failures.Inc()
		m.log.Error("the CA did not issue a certificate", "name", name, "renewal", renewal, "err", data["error"])
	}
	return nil
}

// TLSConfig is the https listener's configuration: HTTP/1.1, the certificates of the mode,
// and (acme) the TLS-ALPN-01 challenge answers. Valid before Start; handshakes fail until
// Start loaded the certificates.
func (m *Manager) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"http/1.1", "acme-tls/1"},
		GetCertificate: m.getCertificate,
	}
}

func (m *Manager) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	m.mu.Lock()
	magic, files := m.magic, m.files
	m.mu.Unlock()
	switch {
	case files != nil:
		return files, nil
	case magic != nil:
		// A handshake that waits for the CA (a first on-demand issuance) waits at most
		// HandshakeTimeout.
		ctx, cancel := context.WithTimeout(hello.Context(), m.o.HandshakeTimeout)
		defer cancel()
		return magic.GetCertificateWithContext(ctx, hello)
	}
	return nil, errors.New("certs: not started")
}

// Stop ends renewals and what certmagic runs in the background; locks still held run out.
func (m *Manager) Stop(context.Context) error {
	m.mu.Lock()
	cancel, cache := m.cancel, m.cache
	m.cancel, m.cache = nil, nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if cache != nil {
		cache.Stop()
	}
	if m.storage != nil {
		m.storage.Close()
	}
	return nil
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}
