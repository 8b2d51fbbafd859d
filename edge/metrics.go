package edge

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics counts requests by product, route and status, with a latency histogram.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_http_requests_total",
			Help: "HTTP requests by product, route pattern and status.",
		}, []string{"product", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatehouse_http_request_duration_seconds",
			Help:    "HTTP request latency by product and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"product", "route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

func (m *httpMetrics) observe(c *fiber.Ctx, status int, d time.Duration) {
	route := "unmatched"
	if r := c.Route(); r != nil && r.Path != "/" && r.Path != "" {
		route = r.Path
	}
	product := "other"
	if p := strings.Split(strings.TrimPrefix(route, "/"), "/"); len(p) > 0 && p[0] != "" {
		product = p[0]
	}
	m.requests.WithLabelValues(product, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(product, route).Observe(d.Seconds())
}

// StorageGauge exports the database's on-disk size; size returns the LSM and value-log bytes.
func StorageGauge(reg prometheus.Registerer, size func() (int64, int64)) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_storage_bytes",
		Help: "On-disk size of the embedded database (LSM tree plus value log).",
	}, func() float64 {
		l, v := size()
		return float64(l + v)
	}))
}
