package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"127.9.9.9", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"100.64.0.1", false},       // carrier-grade NAT
		{"169.254.169.254", false},  // AWS/GCP/Azure metadata
		{"fd00:ec2::254", false},    // AWS IPv6 metadata (unique local)
		{"fc00::1", false},          // unique local
		{"fe80::1", false},          // link-local
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", true},    // NAT64 of 8.8.8.8
		{"0.0.0.0", false},
		{"::", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
	} {
		if got := Public(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Public(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	if Public(netip.Addr{}) {
		t.Error("Public(zero Addr) = true, want false")
	}
}

// listen starts an HTTP server on addr (host:0) answering with h.
func listen(t *testing.T, addr string, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listen %s: %v", addr, err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

// only admits exactly one address (a loopback one), so redirects to its neighbours are refused.
func only(a string) func(netip.Addr) bool {
	want := netip.MustParseAddr(a)
	return func(got netip.Addr) bool { return got == want }
}

func TestClientRefusesPrivateTargets(t *testing.T) {
	loop := listen(t, "127.0.0.1:0", ok)
	port := loop[strings.LastIndex(loop, ":")+1:]
	other := listen(t, "127.0.0.2:0", ok)
	redirectTo := func(target string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) }
	}
	toOther := listen(t, "127.0.0.1:0", redirectTo(other+"/x"))
	toMeta := listen(t, "127.0.0.1:0", redirectTo("http://169.254.169.254/latest/meta-data/"))
	toName := listen(t, "127.0.0.1:0", redirectTo("http://localhost:"+port+"/"))
	toFile := listen(t, "127.0.0.1:0", redirectTo("file:///etc/passwd"))

	for _, tc := range []struct {
		name   string
		policy Options
		url    string
		want   error // nil: a 200 answer
	}{
		{"loopback literal refused", Options{}, loop, ErrRefused},
		{"name resolving to loopback refused", Options{}, "http://localhost:" + port + "/", ErrRefused},
		{"metadata address refused", Options{}, "http://169.254.169.254/latest/meta-data/", ErrRefused},
		{"IPv6 metadata address refused", Options{}, "http://[fd00:ec2::254]/", ErrRefused},
		{"mapped loopback refused", Options{}, "http://[::ffff:127.0.0.1]:" + port + "/", ErrRefused},
		{"loopback allowed with allow_private_networks", Options{AllowPrivateNetworks: true}, loop, nil},
		{"name allowed with allow_private_networks", Options{AllowPrivateNetworks: true}, "http://localhost:" + port + "/", nil},
		{"redirect to a refused address re-checked at connect", Options{AllowAddr: only("127.0.0.1")}, toOther, ErrRefused},
		{"redirect to the metadata address refused", Options{AllowAddr: only("127.0.0.1")}, toMeta, ErrRefused},
		{"redirect to a name is dialled through the policy", Options{AllowAddr: only("127.0.0.1")}, toName, nil},
		{"redirect to file: refused", Options{AllowAddr: only("127.0.0.1")}, toFile, ErrScheme},
		{"redirect followed with allow_private_networks", Options{AllowPrivateNetworks: true}, toOther, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.policy)
			resp, err := p.Client().Get(tc.url)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Get(%s) = %v, want 200", tc.url, err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("Get(%s) status = %d, want 200", tc.url, resp.StatusCode)
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("Get(%s) succeeded with %d, want %v", tc.url, resp.StatusCode, tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Get(%s) = %v, want %v", tc.url, err, tc.want)
			}
		})
	}
}

func TestDialContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tc := range []struct {
		name, addr string
		allow      bool
		refused    bool
	}{
		{"loopback", "127.0.0.1:" + port, false, true},
		{"localhost", "localhost:" + port, false, true},
		{"metadata", "169.254.169.254:25", false, true},
		{"loopback allowed", "127.0.0.1:" + port, true, false},
	} {
		c, err := New(Options{AllowPrivateNetworks: tc.allow}).DialContext(context.Background(), "tcp", tc.addr)
		if c != nil {
			c.Close()
		}
		if got := errors.Is(err, ErrRefused); got != tc.refused {
			t.Errorf("%s: DialContext(%s) = %v, refused %v, want refused %v", tc.name, tc.addr, err, got, tc.refused)
		}
		if !tc.refused && err != nil {
			t.Errorf("%s: DialContext(%s) = %v, want a connection", tc.name, tc.addr, err)
		}
	}
}

func TestResponseCapAndTimeout(t *testing.T) {
	big := listen(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { w.Write(make([]byte, 2048)) })
	p := New(Options{AllowPrivateNetworks: true, MaxResponseBytes: 1024})
	resp, err := p.Client().Get(big)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := ReadBody(resp.Body, p.MaxResponseBytes()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBody(2048 bytes, cap 1024) = %v, want ErrTooLarge", err)
	}
	if b, err := ReadBody(strings.NewReader("abc"), 3); err != nil || string(b) != "abc" {
		t.Errorf("ReadBody(abc, 3) = %q, %v", b, err)
	}

	release := make(chan struct{})
	defer close(release)
	hang := listen(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	slow := New(Options{AllowPrivateNetworks: true, Timeout: 50 * time.Millisecond})
	if resp, err := slow.Client().Get(hang); err == nil {
		resp.Body.Close()
		t.Fatal("Get(hanging server) succeeded, want a timeout")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("Get(hanging server) = %v, want a timeout error", err)
	}
}

// CheckTarget refuses, ahead of any connection, a URL whose literal address or whose name's
// current addresses the policy refuses; a name that does not resolve now is left to the
// connect-time check.
func TestCheckTarget(t *testing.T) {
	strict, lax := New(Options{}), New(Options{AllowPrivateNetworks: true})
	for _, tc := range []struct {
		url                 string
		wantStrict, wantLax error
	}{
		{"https://203.0.113.1.nip.invalid/", nil, nil}, // does not resolve: checked at connect
		{"http://127.0.0.1:8080/in", ErrRefused, nil},
		{"http://[::1]/in", ErrRefused, nil},
		{"http://[::ffff:10.0.0.1]/in", ErrRefused, nil},
		{"http://169.254.169.254/latest", ErrRefused, nil},
		{"http://localhost:8080/in", ErrRefused, nil}, // a name resolving to loopback
		{"https://8.8.8.8/", nil, nil},
		{"ftp://8.8.8.8/", ErrScheme, ErrScheme},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if err := strict.CheckTarget(context.Background(), u); !errors.Is(err, tc.wantStrict) {
			t.Errorf("CheckTarget(%s) = %v, want %v", tc.url, err, tc.wantStrict)
		}
		if err := lax.CheckTarget(context.Background(), u); !errors.Is(err, tc.wantLax) {
			t.Errorf("CheckTarget(%s) with private networks allowed = %v, want %v", tc.url, err, tc.wantLax)
		}
	}
}
