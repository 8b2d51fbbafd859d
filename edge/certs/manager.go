package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
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
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// HostLookup says whether a tenants document lists host (the on-demand decision), and which
// hosts the documents list (whose stored certificates are renewed in the background).
type HostLookup interface {
	Listed(ctx context.Context, host string) (bool, error)
	Hosts(ctx context.Context) ([]string, error)
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
	// RenewCheckInterval is how often certificates are checked for renewal, and the listed
	// tenant domains' stored certificates looked for (default 10 minutes; tests with
	// short-lived certificates shorten it).
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

	// nudge wakes the keeper of tenant domains (a tenants change); buffered, never blocks.
	nudge chan struct{}

	mu      sync.Mutex
	magic   *certmagic.Config
	issuer  *certmagic.ACMEIssuer
	cache   *certmagic.Cache
	files   *tls.Certificate
	cancel  context.CancelFunc
	kept    chan struct{}   // closed when the keeper has ended
	tenants map[string]bool // the tenant domains renewed in the background (see keep)
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
	if o.RenewCheckInterval <= 0 {
		o.RenewCheckInterval = certmagic.DefaultRenewCheckInterval
	}
	m := &Manager{o: o, log: o.Log.With("component", "tls"), metrics: newMetrics(o.Registerer),
		nudge: make(chan struct{}, 1), tenants: map[string]bool{}}
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
	// handshake). certmagic's background maintenance skips every certificate whose
	// configuration is on demand, so a certificate whose names are all tls.domains or listed
	// tenant domains is handed to the managed configuration, which renews it in the background
	// (a handshake may still renew one that is due); that of a host no document lists any more
	// is left to the on-demand one, and so not renewed.
	var managed, onDemand *certmagic.Config
	cache := certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(cert certmagic.Certificate) (*certmagic.Config, error) {
			if m.renewable(cert.Names) {
				return managed, nil
			}
			return onDemand, nil
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
	kept := make(chan struct{})
	m.mu.Lock()
	m.magic, m.issuer, m.cache, m.cancel, m.kept = onDemand, issuer, cache, cancel, kept
	m.mu.Unlock()
	if len(c.Domains) > 0 {
		if err := managed.ManageAsync(mctx, c.Domains); err != nil {
			m.log.Error("managing tls.domains", "domains", c.Domains, "err", err)
			m.metrics.failures.Inc()
		}
	}
	go func() {
		defer close(kept)
		m.keep(mctx, managed, cache)
	}()
	return nil
}

// keep keeps the tenant domains' certificates in step with the tenants documents, at start,
// every RenewCheckInterval and after each change of a project's domains (Changed): the
// stored certificate of every listed host is loaded into the cache, where certmagic's
// maintenance renews it in the background (a node that never saw a handshake for the host
// renews it too, the store's locks making one node do it), and that of a host no document
// lists any more is dropped (getCertificate refuses its handshakes).
func (m *Manager) keep(ctx context.Context, managed *certmagic.Config, cache *certmagic.Cache) {
	if m.o.Hosts == nil {
		return
	}
	tick := time.NewTicker(m.o.RenewCheckInterval)
	defer tick.Stop()
	for {
		if err := m.syncTenants(ctx, managed, cache); err != nil && ctx.Err() == nil {
			m.log.Warn("reading the tenant domains (their certificates are looked at again later)", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-m.nudge:
		}
	}
}

// syncTenants is one pass of keep.
func (m *Manager) syncTenants(ctx context.Context, managed *certmagic.Config, cache *certmagic.Cache) error {
	hosts, err := m.o.Hosts.Hosts(ctx)
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		if !slices.Contains(m.o.Config.Domains, h) {
			listed[h] = true
		}
	}
	m.mu.Lock()
	prev := m.tenants
	m.tenants = maps.Clone(listed) // decide adds to it meanwhile
	m.mu.Unlock()
	var gone []certmagic.SubjectIssuer
	for h := range prev {
		if !listed[h] {
			gone = append(gone, certmagic.SubjectIssuer{Subject: h})
		}
	}
	if len(gone) > 0 {
		cache.RemoveManaged(gone)
		m.log.Info("tenant domains no longer listed: their certificates are not served or renewed", "count", len(gone))
	}
	for h := range listed {
		if ctx.Err() != nil {
			return nil
		}
		if len(cache.AllMatchingCertificates(h)) > 0 {
			continue
		}
		// Not obtained yet (it will be at the host's first handshake), or obtained by another
		// node or before a restart: then it is loaded, and from now on renewed here too.
		if _, err := managed.CacheManagedCertificate(ctx, h); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.log.Warn("loading a tenant domain's stored certificate", "name", h, "err", err)
		}
	}
	return nil
}

// renewable reports whether a certificate of names is renewed in the background: each is a
// name of tls.domains or a tenant domain a document lists.
func (m *Manager) renewable(names []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		if !slices.Contains(m.o.Config.Domains, n) && !m.tenants[n] {
			return false
		}
	}
	return len(names) > 0
}

// Changed is a tenancy change listener: a change of a project's domains (or a project's
// removal), on this node or another, wakes the keeper of the tenant domains' certificates.
func (m *Manager) Changed(_ context.Context, changes []journal.Change) {
	for _, ch := range changes {
		if ch.Kind == kindDomain || ch.Kind == "project" {
			select {
			case m.nudge <- struct{}{}:
			default:
			}
			return
		}
	}
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
			// Renewed in the background once obtained, before the keeper's next pass.
			m.mu.Lock()
			m.tenants[name] = true
			m.mu.Unlock()
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
		// A name no document lists (any more) gets no certificate, not even one the cache or
		// the store still holds. When the lookup fails (the store unreachable), what the cache
		// holds is still served.
		if hello.ServerName != "" {
			if err := m.decide(ctx, hello.ServerName); errors.Is(err, ErrNotListed) {
				return nil, err
			}
		}
		return magic.GetCertificateWithContext(ctx, hello)
	}
	return nil, errors.New("certs: not started")
}

// Stop ends renewals and what certmagic runs in the background; locks still held run out.
func (m *Manager) Stop(context.Context) error {
	m.mu.Lock()
	cancel, cache, kept := m.cancel, m.cache, m.kept
	m.cancel, m.cache, m.kept = nil, nil, nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if kept != nil {
		<-kept
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
