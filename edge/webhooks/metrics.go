package webhooks

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/promreg"
)

// metrics are the delivery metrics: gatehouse_webhook_deliveries_total{event,outcome} and
// gatehouse_webhook_delivery_seconds{event,outcome} (outcome success, http_error, network,
// gone). A nil *metrics records nothing.
type metrics struct {
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_webhook_deliveries_total",
			Help: "Webhook delivery attempts by event type and outcome."}, []string{"event", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gatehouse_webhook_delivery_seconds",
			Help: "Latency of webhook delivery attempts that reached the receiver.", Buckets: prometheus.DefBuckets},
			[]string{"event", "outcome"}),
	}
	m.attempts = promreg.Register(reg, m.attempts)
	m.latency = promreg.Register(reg, m.latency)
	return m
}

func (m *metrics) observe(event string, r result, gone bool) {
	if m == nil {
		return
	}
	outcome := "success"
	switch {
	case gone:
		outcome = "gone"
	case r.err != nil:
		outcome = "network"
	case !r.ok():
		outcome = "http_error"
	}
	m.attempts.WithLabelValues(event, outcome).Inc()
	if r.err == nil {
		m.latency.WithLabelValues(event, outcome).Observe(r.latency.Seconds())
	}
}
