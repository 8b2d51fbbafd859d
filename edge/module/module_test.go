package module_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/module"
)

type mailer interface{ Mail() string }
type filter interface{ Filter() string }

type mailPort struct{}

func (mailPort) Mail() string { return "mail" }

type filterPort struct{ name string }

func (f filterPort) Filter() string { return f.name }

// TestPort: a product finds the first port implementing the interface it declares, and the
// nil interface (run without it) when none does.
func TestPort(t *testing.T) {
	ps := module.Ports{filterPort{"first"}, mailPort{}, filterPort{"second"}}
	for _, tc := range []struct {
		name string
		got  func() string
		want string
	}{
		{"mailer", func() string { return module.Port[mailer](ps).Mail() }, "mail"},
		{"first filter", func() string { return module.Port[filter](ps).Filter() }, "first"},
	} {
		if got := tc.got(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if m := module.Port[mailer](module.Ports{filterPort{}}); m != nil {
		t.Errorf("Port of an absent interface = %v, want nil", m)
	}
	if m := module.Port[mailer](nil); m != nil {
		t.Errorf("Port over no ports = %v, want nil", m)
	}
}

// TestClose: closers run newest first, all of them, their errors joined.
func TestClose(t *testing.T) {
	var order []string
	boom := errors.New("boom")
	closers := []func() error{
		func() error { order = append(order, "a"); return nil },
		func() error { order = append(order, "b"); return boom },
		func() error { order = append(order, "c"); return nil },
	}
	if err := module.Close(closers); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want boom joined", err)
	}
	if got := strings.Join(order, ","); got != "c,b,a" {
		t.Errorf("order = %s, want c,b,a", got)
	}
}
