package pgtest

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections on loopback to a server, for partition tests: between
// Partition and Heal it copies nothing in either direction, on every connection, new ones
// included, and closes nothing (no FIN, no RST), as a network partition or a lost machine
// looks to the client. What it reads meanwhile (an end of stream too) is held and delivered
// once it forwards again, as TCP delivers what it retransmits after a partition heals.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	cut    bool
	closed bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// StartProxy starts a proxy to target (host:port) on a free loopback port; it is closed at
// the test's cleanup, with every connection it forwards.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns u (a postgres:// URL of the proxied server) with its host replaced by the
// proxy's.
func (p *Proxy) URL(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	pu.Host = p.Addr()
	return pu.String(), nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// track registers a connection pair, or closes it when the proxy is closed.
func (p *Proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		s.Close()
		return false
	}
	p.conns = append(p.conns, c, s)
	return true
}

// pipe copies src to dst, each read held while the proxy is partitioned; at src's end it
// closes dst (after the partition, if one is on).
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.pass() {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			dst.Close()
			return
		}
	}
}

// pass waits while the proxy is partitioned; false once it is closed.
func (p *Proxy) pass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.cut && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

// Partition stops forwarding, closing nothing.
func (p *Proxy) Partition() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Heal forwards again, what was held first.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
	p.cond.Broadcast()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	conns := p.conns
	p.mu.Unlock()
	p.cond.Broadcast()
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}
