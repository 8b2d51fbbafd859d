package files

import (
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts uploads by outcome, accepted bytes and swept assets, and the variants: builds
// by outcome and their time, variants served from the store, and the build pool's queue and
// memory in use.
type metrics struct {
	uploads     *prometheus.CounterVec
	bytes       prometheus.Counter
	swept       prometheus.Counter
	builds      *prometheus.CounterVec
	buildTime   prometheus.Histogram
	variantHits prometheus.Counter
	pool        prometheus.Collector
}

func newMetrics(reg prometheus.Registerer, pool *buildPool) *metrics {
	m := &metrics{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_files_uploads_total",
			Help: "Signed PUTs by outcome: accepted, or the error code that refused them.",
		}, []string{"outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatehouse_files_uploaded_bytes_total",
			Help: "Bytes of accepted uploads.",
		}),
		swept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatehouse_files_swept_total",
			Help: "Pending assets removed by the sweeper.",
		}),
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_files_variant_builds_total",
			Help: "Variant builds by outcome: built, or the error code that refused them.",
		}, []string{"outcome"}),
		buildTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gatehouse_files_variant_build_seconds",
			Help:    "Time of variant builds that were made (waiting in the pool included).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		variantHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatehouse_files_variant_hits_total",
			Help: "Variant requests answered from a variant made before.",
		}),
		pool: poolCollector{pool},
	}
	if reg != nil {
		reg.MustRegister(m.uploads, m.bytes, m.swept, m.builds, m.buildTime, m.variantHits, m.pool)
	}
	return m
}

// build records one variant build's outcome.
func (m *metrics) build(err error, d time.Duration) {
	if err == nil {
		m.builds.WithLabelValues("built").Inc()
		m.buildTime.Observe(d.Seconds())
		return
	}
	m.builds.WithLabelValues(codeOf(err)).Inc()
}

func codeOf(err error) string {
	code := apierr.CodeInternal
	var e *apierr.Error
	if errors.As(err, &e) && e.Code != "" {
		code = e.Code
	}
	return code
}

var (
	poolQueued = prometheus.NewDesc("gatehouse_files_variant_queue_depth", "Variant builds waiting for a slot of the build pool.", nil, nil)
	poolBytes  = prometheus.NewDesc("gatehouse_files_variant_memory_bytes", "Bytes of files.variant_memory_mb reserved by the builds running.", nil, nil)
)

// poolCollector reads the build pool's gauges at scrape time.
type poolCollector struct{ p *buildPool }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- poolQueued; ch <- poolBytes }

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	waiting, used := c.p.stats()
	ch <- prometheus.MustNewConstMetric(poolQueued, prometheus.GaugeValue, float64(waiting))
	ch <- prometheus.MustNewConstMetric(poolBytes, prometheus.GaugeValue, float64(used))
}

// upload records one PUT's outcome.
func (m *metrics) upload(size int64, err error) {
	if err == nil {
		m.uploads.WithLabelValues("accepted").Inc()
		m.bytes.Add(float64(size))
		return
	}
	m.uploads.WithLabelValues(codeOf(err)).Inc()
}
