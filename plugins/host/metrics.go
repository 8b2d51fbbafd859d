package host

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the plugin metrics, labelled by project, plugin and hook.
type metrics struct {
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	timeouts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// hookMetrics are one plugin hook's series, looked up once at registration.
type hookMetrics struct {
	calls    prometheus.Counter
	timeouts prometheus.Counter
	latency  prometheus.Observer
	errors   *prometheus.CounterVec // curried: only the kind label is left
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	labels := []string{"project", "plugin", "hook"}
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_plugin_calls_total",
			Help: "Plugin hook calls, by project, plugin and hook.",
		}, labels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_plugin_errors_total",
			Help: "Failed plugin hook calls, by kind: trap, timeout, memory, output, guest_error, circuit_open, pool_busy, busy, start, refused.",
		}, append(labels, "kind")),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_plugin_timeouts_total",
			Help: "Plugin hook calls stopped at their time limit.",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatehouse_plugin_call_duration_seconds",
			Help:    "Plugin hook call latency, including waiting for a free instance.",
			Buckets: []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2, 5e-2, 0.1, 0.5, 1, 5},
		}, labels),
	}
	var done []prometheus.Collector
	for _, c := range []prometheus.Collector{m.calls, m.errors, m.timeouts, m.latency} {
		if err := reg.Register(c); err != nil {
			for _, d := range done {
				reg.Unregister(d)
			}
			return nil, err
		}
		done = append(done, c)
	}
	return m, nil
}

func (m *metrics) unregister(reg prometheus.Registerer) {
	reg.Unregister(m.calls)
	reg.Unregister(m.errors)
	reg.Unregister(m.timeouts)
	reg.Unregister(m.latency)
}

func (m *metrics) forHook(project, plugin, hook string) *hookMetrics {
	l := prometheus.Labels{"project": project, "plugin": plugin, "hook": hook}
	return &hookMetrics{
		calls:    m.calls.With(l),
		timeouts: m.timeouts.With(l),
		latency:  m.latency.With(l),
		errors:   m.errors.MustCurryWith(l),
	}
}

// forget drops an unregistered plugin's series.
func (m *metrics) forget(project, plugin string) {
	l := prometheus.Labels{"project": project, "plugin": plugin}
	m.calls.DeletePartialMatch(l)
	m.errors.DeletePartialMatch(l)
	m.timeouts.DeletePartialMatch(l)
	m.latency.DeletePartialMatch(l)
}
