package forms

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
)

// metrics are the product's Prometheus series.
type metrics struct {
	outcomes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, c *committer) *metrics {
	m := &metrics{outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_forms_submissions_total",
		Help: "Form submission attempts by outcome: received, or the error code that refused them.",
	}, []string{"outcome"})}
	if reg != nil {
		reg.MustRegister(m.outcomes,
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "gatehouse_forms_commits_total",
				Help: "Durable commits of the forms committer (each holds one or more submissions).",
			}, func() float64 { return float64(c.commits.Load()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "gatehouse_forms_committed_submissions_total",
				Help: "Submissions written by the forms committer.",
			}, func() float64 { return float64(c.writes.Load()) }),
		)
	}
	return m
}

// observe counts one attempt's outcome.
func (m *metrics) observe(err error) {
	if err == nil {
		m.outcomes.WithLabelValues("received").Inc()
		return
	}
	code := httpx.As(err).Code
	if code == "" {
		code = "PAYLOAD_TOO_LARGE"
	}
	m.outcomes.WithLabelValues(code).Inc()
}
