package forms

import (
	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the product's Prometheus series.
type metrics struct {
	outcomes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_forms_submissions_total",
		Help: "Form submission attempts by outcome: received, or the error code that refused them.",
	}, []string{"outcome"})}
	if reg != nil {
		reg.MustRegister(m.outcomes)
	}
	return m
}

// observe counts one attempt's outcome.
func (m *metrics) observe(err error) {
	if err == nil {
		m.outcomes.WithLabelValues("received").Inc()
		return
	}
	code := apierr.As(err).Code
	if code == "" {
		code = "PAYLOAD_TOO_LARGE"
	}
	m.outcomes.WithLabelValues(code).Inc()
}
