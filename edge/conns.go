package edge

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The server's own view of its connections, for two things fasthttp does not do:
//
//   - Graceful stop with quiet connections. fasthttp (v1.78) counts a new connection as busy
//     for its first 5 seconds, so one that never sends a request holds its Shutdown that long;
//     and it closes "idle" keep-alive connections even when the next request already waits
//     unread in the kernel (the request is dropped unanswered). The listener below tracks
//     every connection and whether it is quiet: between an answer (or its accept) and the
//     first byte of its next request, with nothing waiting in the kernel. Shutdown ends the
//     quiet ones at once, answers every later request with Connection: close, and waits until
//     the requests in flight are answered and their connections closed.
//   - Lingering close. When the server answers before reading the whole body (413, or a
//     refusal before a large upload) and closes, the kernel resets a connection that still has
//     unread data, and the client often sees the reset instead of the answer. Close sends FIN
//     first and reads what the client still sends (up to lingerMax bytes, for at most
//     lingerTime) before closing, as nginx's lingering_close and net/http do.
//
// The tracking never closes a connection under fasthttp: closing one fasthttp is serving
// would cut the request in flight (fasthttp v1.51 even panicked on it). To end a quiet
// connection, Shutdown moves its read deadline into the past, which wakes the server's blocked
// read; that read then reports the end of the connection (io.EOF) and fasthttp closes it
// itself. A request whose first byte comes in that instant is served instead: the connection
// stops being quiet (StateActive) and gets its own read deadline back.

// Lingering close bounds: what a client may still send after the answer, and for how long.
const (
	lingerMax  = 4 * MaxBodyBytes
	lingerTime = 10 * time.Second
)

// longAgo is a read deadline in the past: it wakes a blocked read at once.
var longAgo = time.Unix(1, 0)

// connListener tracks the connections it accepts.
type connListener struct {
	net.Listener
	mu       sync.Mutex
	conns    map[*trackedConn]struct{}
	stopping atomic.Bool   // set under mu; read without it on every answer
	drained  chan struct{} // closed when stopping and no connection is left
	once     sync.Once
	err      error
}

func newConnListener(ln net.Listener) *connListener {
	return &connListener{Listener: ln, conns: map[*trackedConn]struct{}{}, drained: make(chan struct{})}
}

// Accept wraps each connection so the server knows when it is quiet.
func (l *connListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l, quiet: true}
	l.mu.Lock()
	if l.stopping.Load() {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	if t, ok := c.(*tls.Conn); ok {
		return &trackedTLSConn{trackedConn: tc, tls: t}, nil
	}
	return tc, nil
}

// trackedTLSConn is a tracked connection of the https listener: fasthttp sees its TLS state
// (RequestCtx.IsTLS, so fiber's c.Protocol() is "https").
type trackedTLSConn struct {
	*trackedConn
	tls *tls.Conn
}

// Handshake runs the TLS handshake (fasthttp's tlsConn interface).
func (c *trackedTLSConn) Handshake() error { return c.tls.Handshake() }

// ConnectionState reports the TLS state (fasthttp's tlsConn interface).
func (c *trackedTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// tracker is what connState finds behind a connection fasthttp hands it.
type tracker interface{ tracked() *trackedConn }

func (c *trackedConn) tracked() *trackedConn { return c }

// waiting reports whether request bytes wait in the kernel (for a TLS connection: bytes of
// its records on the TCP connection below).
func (c *trackedConn) waiting() bool {
	if t, ok := c.Conn.(*tls.Conn); ok {
		return pending(t.NetConn())
	}
	return pending(c.Conn)
}

// Close stops accepting (once; fasthttp's own Close after ours returns nil).
func (l *connListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// stop closes the listener and ends every quiet connection; drained is closed once all
// connections have been answered and closed.
func (l *connListener) stop() {
	l.mu.Lock()
	l.stopping.Store(true)
	l.mu.Unlock()
	_ = l.Close()
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.checkDrained()
	l.mu.Unlock()
	for _, c := range conns {
		c.endIfQuiet()
	}
}

func (l *connListener) forget(c *trackedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.checkDrained()
	l.mu.Unlock()
}

// checkDrained closes drained when stopping with no connection left (l.mu held).
func (l *connListener) checkDrained() {
	if l.stopping.Load() && len(l.conns) == 0 {
		select {
		case <-l.drained:
		default:
			close(l.drained)
		}
	}
}

// trackedConn is one accepted connection.
type trackedConn struct {
	net.Conn
	l      *connListener
	closed atomic.Bool

	mu sync.Mutex
	// quiet is true from the connection's accept or its last answer until fasthttp sees the
	// first byte of the next request (StateActive).
	quiet bool
	// ending is set when Shutdown ends the quiet connection: its read deadline stays in the
	// past and a read that times out reports io.EOF.
	ending bool
	// deadline is the read deadline fasthttp last asked for, applied again if the connection
	// stops ending because a request arrived.
	deadline time.Time
}

// endIfQuiet ends the connection if it is quiet and no request byte waits in the kernel: its
// blocked read wakes and reports io.EOF, and fasthttp closes the connection.
func (c *trackedConn) endIfQuiet() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.quiet || c.ending || c.waiting() {
		return
	}
	c.ending = true
	_ = c.Conn.SetReadDeadline(longAgo)
}

// busy marks the connection as serving a request; one being ended goes on instead, under the
// read deadline fasthttp set (c.mu held).
func (c *trackedConn) busy() {
	c.quiet = false
	if c.ending {
		c.ending = false
		_ = c.Conn.SetReadDeadline(c.deadline)
	}
}

// Read reports the end of an ending connection as a client's close (io.EOF), so fasthttp
// closes it without an answer; request bytes that arrived meanwhile are read and served.
func (c *trackedConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		c.mu.Lock()
		if !c.ending {
			c.mu.Unlock()
			return n, err
		}
		if !c.waiting() {
			c.mu.Unlock()
			return 0, io.EOF
		}
		c.busy()
		c.mu.Unlock()
	}
}

// SetReadDeadline records fasthttp's deadline, and applies it unless the connection is ending.
func (c *trackedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.ending {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline is SetWriteDeadline and SetReadDeadline.
func (c *trackedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// Close half-closes and drains in the background (lingering close), then closes.
func (c *trackedConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	defer c.l.forget(c)
	tcp, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return c.Conn.Close()
	}
	if err := tcp.CloseWrite(); err != nil {
		return tcp.Close()
	}
	go func() {
		_ = tcp.SetReadDeadline(time.Now().Add(lingerTime))
		_, _ = io.CopyN(io.Discard, tcp, lingerMax)
		_ = tcp.Close()
	}()
	return nil
}

// connState is fasthttp's connection state hook, called by the goroutine serving the
// connection: the first byte of a request makes it busy; back to idle after an answer it is
// quiet again and, while stopping, ended.
func connState(c net.Conn, st fasthttp.ConnState) {
	t, ok := c.(tracker)
	if !ok {
		return
	}
	tc := t.tracked()
	switch st {
	case fasthttp.StateActive:
		tc.mu.Lock()
		tc.busy()
		tc.mu.Unlock()
	case fasthttp.StateIdle:
		tc.mu.Lock()
		tc.quiet = true
		tc.mu.Unlock()
		if tc.l.stopping.Load() {
			tc.endIfQuiet()
		}
	}
}

// closeWhileStopping wraps the fasthttp handler: once the server stops, every answer closes
// its connection.
func (s *Server) closeWhileStopping(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if s.stopping.Load() {
			ctx.SetConnectionClose()
		}
	}
}

// Serve accepts connections on ln until Shutdown. It may run on several listeners at once
// (plain HTTP, and HTTPS through ServeTLS).
func (s *Server) Serve(ln net.Listener) error {
	cl := newConnListener(ln)
	s.mu.Lock()
	if s.stopping.Load() {
		s.mu.Unlock()
		return nil
	}
	s.lns = append(s.lns, cl)
	s.mu.Unlock()
	err := s.app.Listener(cl)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// ServeTLS is Serve over TLS: ln's connections are TLS connections of cfg (the handshake runs
// on the connection's first read, under the server's read timeout).
func (s *Server) ServeTLS(ln net.Listener, cfg *tls.Config) error {
	return s.Serve(tls.NewListener(ln, cfg))
}

// Shutdown stops accepting, closes the connections with no request in flight at once, and
// waits until ctx ends for the requests in flight to be answered (each answer closes its
// connection).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping.Store(true)
	lns := s.lns
	s.mu.Unlock()
	if len(lns) == 0 {
		return nil
	}
	for _, cl := range lns {
		cl.stop()
	}
	for _, cl := range lns {
		select {
		case <-cl.drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Nothing is left to wait for; this runs fiber's own shutdown hooks.
	return s.app.ShutdownWithContext(ctx)
}
