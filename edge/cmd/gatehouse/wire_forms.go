package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/embedhost"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// formsRate is forms.rate_per_minute, or the interface's 60 when unset.
func formsRate(n int) int {
	if n <= 0 {
		return 60
	}
	return n
}

// addForms wires the Forms product (public routes and the admin inbox) and the embed host.
func (a *assembly) addForms(ctx context.Context, d deps) error {
	svc, err := forms.NewService(forms.Options{
		DB:            d.db,
		Blobs:         d.blobs,
		RatePerMinute: d.cfg.Forms.RatePerMinute,
		Limiter:       sharedLimiter(d, "forms", formsRate(d.cfg.Forms.RatePerMinute), time.Minute),
		Verifiers: forms.NewVerifiers(d.cfg.Captcha.Turnstile.VerifyURL, d.cfg.Captcha.HCaptcha.VerifyURL,
			d.cfg.Captcha.ReCaptcha.VerifyURL, d.egress.Client()),
		Filter:     formsPlugins{h: d.plugins},
		Events:     formEvents{hooks: d.hooks, mail: a.mail, log: d.log.With("product", "forms")},
		Plugins:    formsPlugins{h: d.plugins},
		AdminBase:  strings.TrimRight(d.cfg.PublicURL, "/") + "/admin/v1",
		SpoolDir:   filepath.Join(d.cfg.Data, "tmp", "forms"),
		Log:        d.log.With("product", "forms"),
		Registerer: d.reg,
	})
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil { // before the server listens: stale spool parts go
		return err
	}
	if err := d.tenancy.Add(svc); err != nil {
		svc.Close()
		return err
	}
	a.products = append(a.products,
		forms.NewAPI(svc, d.auth, d.cursors, d.cfg.TrustedProxies),
		embedhost.New(embedhost.Options{PublicURL: d.cfg.PublicURL, EmbedURL: d.cfg.EmbedHost}),
	)
	// The commit loop stops after in-flight requests finished and before storage closes.
	a.closers = append(a.closers, func(context.Context) error { svc.Close(); return nil })
	return nil
}
