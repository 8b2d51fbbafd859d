package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
)

// errTestRefused is testEgress's refusal.
var errTestRefused = errors.New("test egress: address refused")

// testEgress is the connection policy the host's tests give it: the gateway's policy lives in
// edge/egress, which plugins may not import (its own tests, and the gateway's with a real
// plugin, cover the address rules). Names resolve through lookup (none when nil); an address
// is dialled only when allow says so (nothing when nil); maxBody caps responses (1 GiB when 0).
type testEgress struct {
	allow   func(netip.Addr) bool
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	maxBody int64
}

var _ Egress = testEgress{}

func (e testEgress) Client() *http.Client {
	var d net.Dialer
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		addrs := []netip.Addr{}
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = append(addrs, a)
		} else if e.lookup != nil {
			if addrs, err = e.lookup(ctx, host); err != nil {
				return nil, err
			}
		}
		for _, a := range addrs {
			if e.allow != nil && e.allow(a.Unmap()) {
				return d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			}
		}
		return nil, fmt.Errorf("%w: %s", errTestRefused, address)
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial}}
}

func (e testEgress) MaxResponseBytes() int64 {
	if e.maxBody == 0 {
		return 1 << 30
	}
	return e.maxBody
}

func (testEgress) Refused(err error) bool { return errors.Is(err, errTestRefused) }

func loopbackOnly(a netip.Addr) bool { return a.Unmap().IsLoopback() }

// http_fetch goes through the Egress it is given: a fetch with none is denied, the policy's
// refusal is answered "denied" without reaching the server, and the policy's response cap
// applies when it is below the host's own.
func TestFetchGoesThroughEgress(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello, a body of 28 bytes...")
	}))
	defer ts.Close()
	srv := ts.URL
	u, _ := url.Parse(srv)
	reg := Registration{Name: "fetcher", Hooks: []string{HookFormsSubmit}, AllowHosts: []string{"http://127.0.0.1:" + u.Port()}}
	ctx := context.Background()
	cases := []struct {
		name   string
		egress Egress
		want   string
	}{
		{"no egress policy", nil, "FETCH_DENIED"},
		{"policy refuses loopback", testEgress{}, "FETCH_DENIED"},
		{"policy allows loopback", testEgress{allow: loopbackOnly}, "FETCH_200"},
		{"policy caps the body below it", testEgress{allow: loopbackOnly, maxBody: 10}, "FETCH_LIMIT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, func(o *Options) { o.Egress = tc.egress })
			mustRegister(t, h, reg)
			before := hits.Load()
			v, err := h.FormsSubmit(ctx, "demo", "contact", msg(srv+"/x"))
			if err != nil || v.Code != tc.want {
				t.Errorf("fetch %s with %s: %+v, %v; want %s", srv, tc.name, v, err, tc.want)
			}
			if reached := hits.Load() > before; reached != (tc.want != "FETCH_DENIED") {
				t.Errorf("fetch with %s: server reached = %v", tc.name, reached)
			}
		})
	}
}
