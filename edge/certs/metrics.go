package certs

import "github.com/prometheus/client_golang/prometheus"

// metrics count what the CA answered, and the on-demand names refused without asking it.
type metrics struct {
	obtained, renewals, failures, refused prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		obtained: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_tls_certificates_obtained_total",
			Help: "Certificates obtained from the ACME CA (first issuance of a name)."}),
		renewals: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_tls_certificate_renewals_total",
			Help: "Certificates renewed with the ACME CA."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_tls_certificate_failures_total",
			Help: "Issuances and renewals the ACME CA did not complete (each attempt; certmagic tries again)."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_tls_on_demand_refused_total",
			Help: "TLS handshakes naming a host no tenants document lists (refused without asking the CA)."}),
	}
	reg.MustRegister(m.obtained, m.renewals, m.failures, m.refused)
	return m
}
