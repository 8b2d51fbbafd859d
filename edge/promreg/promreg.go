// Package promreg registers Prometheus collectors idempotently: a component constructed twice
// against one registry (a restart inside one process, several services in one test) gets the
// series already registered under the same name instead of a registration error.
//
//	m.sends = promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total"}))
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the collector already registered
// with the same description when it has c's type. Any other registration error leaves c
// unregistered and returns it: its values are then simply not exported.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}
