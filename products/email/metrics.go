package email

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/promreg"
)

// Metrics are the product's Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	sends    prometheus.Counter
	outcomes *prometheus.CounterVec
}

// newMetrics registers the product's metrics with reg (nil: none):
// gatehouse_email_sends_total and gatehouse_email_delivery_outcomes_total{outcome}.
func newMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		return nil
	}
	m := &Metrics{
		sends: prometheus.NewCounter(prometheus.CounterOpts{Name: "gatehouse_email_sends_total",
			Help: "Sends accepted (durably queued)."}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gatehouse_email_delivery_outcomes_total",
			Help: "Delivery attempts by outcome: delivered, bounced, deferred, failed, suppressed."}, []string{"outcome"}),
	}
	m.sends = promreg.Register(reg, m.sends)
	m.outcomes = promreg.Register(reg, m.outcomes)
	return m
}

// committed counts one send written to the queue.
func (m *Metrics) committed() {
	if m != nil {
		m.sends.Inc()
	}
}

func (m *Metrics) outcome(o string) {
	if m != nil {
		m.outcomes.WithLabelValues(o).Inc()
	}
}
