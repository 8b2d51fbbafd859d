package promreg

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegisterTwiceSharesTheSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "promreg_test_total", Help: "test"}
	first := Register(reg, prometheus.NewCounter(opts))
	second := Register(reg, prometheus.NewCounter(opts))
	second.Inc()
	if first != second {
		t.Fatalf("Register of the same counter twice returned two collectors")
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetMetric()[0].GetCounter().GetValue() != 1 {
		t.Fatalf("Gather = %v, %v; want one series with value 1", mfs, err)
	}
}
