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
//     moment it is accepted, so one that never sends a request held its Shutdown for the whole
//     timeout; and it closes "idle" keep-alive connections even when the next request already
//     waits unread in the kernel. The listener below tracks every connection and whether a
//     request byte has arrived (or waits) since its last answer. Shutdown closes the quiet
//     ones at once, answers every later request with Connection: close, and waits until the
//     requests in flight are answered and their connections closed.
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
	tc := &trackedConn{Conn: c, l: l}
	tc.quiet.Store(true)
	l.mu.Lock()
	if l.stopping.Load() {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

// Close stops accepting (once; fasthttp's own Close after ours returns nil).
func (l *connListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// stop closes the listener and every quiet connection; drained is closed once the others
// have been answered and closed.
func (l *connListener) stop() {
	l.mu.Lock()
	l.stopping.Store(true)
	l.mu.Unlock()
	_ = l.Close()
	l.mu.Lock()
	var quiet []*trackedConn
	for c := range l.conns {
		if c.isQuiet() {
			quiet = append(quiet, c)
		}
	}
	l.checkDrained()
	l.mu.Unlock()
	for _, c := range quiet {
		c.closeNow()
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
	l *connListener
	// quiet is true while no byte of a request has been read since the last answer.
	quiet  atomic.Bool
	closed atomic.Bool
}

// isQuiet reports whether the connection has no request in flight: nothing read since its
// last answer and nothing waiting to be read.
func (c *trackedConn) isQuiet() bool { return c.quiet.Load() && !pending(c.Conn) }

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

// closeNow closes at once (a quiet connection at shutdown has nothing left to read).
func (c *trackedConn) closeNow() {
	if c.closed.CompareAndSwap(false, true) {
		_ = c.Conn.Close()
		c.l.forget(c)
	}
}

// connState is fasthttp's connection state hook: a connection back to idle after an answer
// is quiet again; while stopping, it is closed.
func connState(c net.Conn, st fasthttp.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok || st != fasthttp.StateIdle {
		return
	}
	tc.quiet.Store(true)
	if tc.l.stopping.Load() && tc.isQuiet() {
		tc.closeNow()
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

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	cl := newConnListener(ln)
	s.mu.Lock()
	if s.stopping.Load() {
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

// Shutdown stops accepting, closes the connections with no request in flight at once, and
// waits until ctx ends for the requests in flight to be answered (each answer closes its
// connection).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping.Store(true)
	cl := s.ln
	s.mu.Unlock()
	if cl == nil {
		return nil
	}
	cl.stop()
	select {
	case <-cl.drained:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Nothing is left to wait for; this runs fiber's own shutdown hooks.
	return s.app.ShutdownWithContext(ctx)
}
