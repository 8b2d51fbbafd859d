package edge

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The server's own view of its connections, for two things fasthttp does not do:
//
//   - Graceful stop with quiet connections. fasthttp counts a connection as busy from the
//     moment it is accepted, and one that never sends a request keeps Shutdown waiting for the
//     whole timeout. The listener below tracks every connection and whether a byte of a request
//     has arrived since its last answer; Shutdown closes the quiet ones at once and waits only
//     for requests in flight.
//   - Lingering close. When the server answers before reading the whole body (413, or a
//     refusal before a large upload) and closes, the kernel resets a connection that still has
//     unread data, and the client often sees the reset instead of the answer. Close sends FIN
//     first and reads what the client still sends (up to lingerMax bytes, for at most
//     lingerTime) before closing, as nginx's lingering_close and net/http do.

// Lingering close bounds: what a client may still send after the answer, and for how long.
const (
	lingerMax  = 4 * MaxBodyBytes
	lingerTime = 10 * time.Second
)

// connListener tracks the connections it accepts.
type connListener struct {
	net.Listener
	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	closed  bool
	closeMu sync.Once
	err     error
}

func newConnListener(ln net.Listener) *connListener {
	return &connListener{Listener: ln, conns: map[*trackedConn]struct{}{}}
}

// Accept wraps each connection so the server knows when it is quiet.
func (l *connListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	tc.quiet.Store(true)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

// Close closes the listener once; later calls (fasthttp's Shutdown after ours) return nil.
func (l *connListener) Close() error {
	l.closeMu.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.err = l.Listener.Close()
	})
	return l.err
}

// closeQuiet closes every connection that has no request in flight.
func (l *connListener) closeQuiet() {
	l.mu.Lock()
	var quiet []*trackedConn
	for c := range l.conns {
		if c.quiet.Load() {
			quiet = append(quiet, c)
		}
	}
	l.mu.Unlock()
	for _, c := range quiet {
		c.closeNow()
	}
}

func (l *connListener) forget(c *trackedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// trackedConn is one accepted connection.
type trackedConn struct {
	net.Conn
	l *connListener
	// quiet is true while no byte of a request has arrived since the last answer.
	quiet  atomic.Bool
	closed atomic.Bool
}

// Read marks the connection busy as soon as a request byte arrives. A read cut by closeNow
// ends like a client's close (io.EOF), not as a network failure to report.
func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.quiet.Store(false)
	}
	if err != nil && n == 0 && c.closed.Load() && errors.Is(err, net.ErrClosed) {
		return 0, io.EOF
	}
	return n, err
}

// Close half-closes and drains in the background (lingering close), then closes.
func (c *trackedConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.l.forget(c)
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

// closeNow closes at once (a quiet connection at shutdown has nothing left to read).
func (c *trackedConn) closeNow() {
	if c.closed.CompareAndSwap(false, true) {
		c.l.forget(c)
		_ = c.Conn.Close()
	}
}

// connState is fasthttp's connection state hook: a connection back to idle after an answer
// is quiet again.
func connState(c net.Conn, st fasthttp.ConnState) {
	if tc, ok := c.(*trackedConn); ok && st == fasthttp.StateIdle {
		tc.quiet.Store(true)
	}
}

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	cl := newConnListener(ln)
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil
	}
	s.ln = cl
	s.mu.Unlock()
	err := s.app.Listener(cl)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, closes the connections with no request in flight at once, waits
// for the requests in flight until ctx ends (their connections close after the answer), then
// returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	cl := s.ln
	s.mu.Unlock()
	if cl == nil {
		return nil
	}
	_ = cl.Close()
	cl.closeQuiet()
	return s.app.ShutdownWithContext(ctx)
}
