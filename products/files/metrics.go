package files

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts uploads by outcome, accepted bytes and swept assets.
type metrics struct {
	uploads *prometheus.CounterVec
	bytes   prometheus.Counter
	swept   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
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
	}
	if reg != nil {
		reg.MustRegister(m.uploads, m.bytes, m.swept)
	}
	return m
}

// upload records one PUT's outcome.
func (m *metrics) upload(size int64, err error) {
	if err == nil {
		m.uploads.WithLabelValues("accepted").Inc()
		m.bytes.Add(float64(size))
		return
	}
	code := apierr.CodeInternal
	var e *apierr.Error
	if errors.As(err, &e) && e.Code != "" {
		code = e.Code
	}
	m.uploads.WithLabelValues(code).Inc()
}
