package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/certs"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// addDomains joins the project section "domains" (decisions.md 9.4) to tenancy: the tenants'
// own domains, routed by edge to their project's assets, embed or API whatever tls.mode (a
// proxy in front may terminate TLS), and given certificates on demand with tls.mode acme.
func (a *assembly) addDomains(_ context.Context, d *deps) error {
	a.domains = certs.NewDomains(d.db)
	return d.tenancy.Add(a.domains)
}

// tenantHosts is the domains as edge's TenantHosts (nil when not wired).
func (a *assembly) tenantHosts() edge.TenantHosts {
	if a.domains == nil {
		return nil
	}
	return a.domains
}

// edgeTLS is HTTPS at the edge: the https listener, the http listener of ACME challenges and
// redirects, and the certificates.
type edgeTLS struct {
	https, http net.Listener
	mgr         *certs.Manager
	redirect    *http.Server
}

// listenTLS binds tls.https_listen and tls.http_listen (with tls.mode acme or files; nil
// with off). Like listen, they are bound before anything else starts.
func listenTLS(cfg config.Config) (*edgeTLS, error) {
	if cfg.TLS.Mode != config.TLSACME && cfg.TLS.Mode != config.TLSFiles {
		return nil, nil
	}
	t := &edgeTLS{}
	var err error
	if t.https, err = net.Listen("tcp", cfg.TLS.HTTPSListen); err != nil {
		return nil, err
	}
	if cfg.TLS.HTTPListen != "" {
		if t.http, err = net.Listen("tcp", cfg.TLS.HTTPListen); err != nil {
			_ = t.https.Close()
			return nil, err
		}
	}
	return t, nil
}

// start makes the certificate manager and starts it: mode files loads its files, mode acme
// serves what the store holds and obtains the rest in the background.
func (t *edgeTLS) start(ctx context.Context, cfg config.Config, db *store.DB, node string, hosts certs.HostLookup, log *slog.Logger, reg prometheus.Registerer) error {
	o := certs.Options{Config: cfg.TLS, DB: db, Node: lease.NewNode(node), Hosts: hosts,
		HTTPSAddr: t.https.Addr().String(), Log: log, Registerer: reg}
	if t.http != nil {
		o.HTTPAddr = t.http.Addr().String()
	}
	mgr, err := certs.New(o)
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	t.mgr = mgr
	return nil
}

// serve serves HTTPS with srv and the challenges and redirects on the http listener; each
// Serve's end is sent to errc.
func (t *edgeTLS) serve(srv *edge.Server, errc chan<- error) int {
	go func() { errc <- srv.ServeTLS(t.https, t.mgr.TLSConfig()) }()
	if t.http == nil {
		return 1
	}
	t.redirect = &http.Server{Handler: t.mgr.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second}
	go func() {
		err := t.redirect.Serve(t.http)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	return 2
}

// shutdown stops the http listener's server (edge's Shutdown stops the https one).
func (t *edgeTLS) shutdown(ctx context.Context) error {
	if t.redirect == nil {
		if t.http != nil {
			return t.http.Close()
		}
		return nil
	}
	return t.redirect.Shutdown(ctx)
}

// close releases the listeners (when serve never ran) and stops the certificate manager.
func (t *edgeTLS) close(ctx context.Context) {
	_ = t.https.Close()
	if t.http != nil {
		_ = t.http.Close()
	}
	if t.mgr != nil {
		_ = t.mgr.Stop(ctx)
	}
}

// banner prints where HTTPS (and the http redirects) are served, before serve's banner.
func (t *edgeTLS) banner(w io.Writer, cfg config.Config) {
	fmt.Fprintf(w, "HTTPS (tls.mode %s) on %s\n", cfg.TLS.Mode, t.https.Addr())
	if t.http != nil {
		fmt.Fprintf(w, "HTTP challenges and redirects to https on %s\n", t.http.Addr())
	}
}

// resolvePublicURL derives an empty public_url from the plain listener (as before tls), or,
// with listen: "", from the https listener: https://<first of tls.domains> (with the port
// when not 443), else https://localhost:<port>.
func resolvePublicURL(cfg *config.Config, ln net.Listener, t *edgeTLS) {
	if cfg.PublicURL != "" {
		return
	}
	if ln != nil || t == nil {
		if ln != nil {
			cfg.ResolvePublicURL(ln.Addr().String())
		}
		return
	}
	_, port, _ := net.SplitHostPort(t.https.Addr().String())
	host := "localhost"
	if len(cfg.TLS.Domains) > 0 {
		host = cfg.TLS.Domains[0]
	}
	if port != "443" {
		host = net.JoinHostPort(host, port)
	}
	cfg.PublicURL = "https://" + host
}
