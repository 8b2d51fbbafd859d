package edge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Startup answers the probes on a bound listener while the gateway is still being built
// (storage opening, migration, wiring, the tenants apply), so that a load balancer or an
// orchestrator gets an answer from the first instant instead of a connection that hangs:
// /healthz answers 200 (the process is up), /readyz and every other path 503 with
// Connection: close (so clients come back on a new connection, to the real server).
// Handoff stops these answers and returns the listener the real server serves; connections
// accepted after it go to the server only.
type Startup struct {
	ln     net.Listener
	conns  chan net.Conn // connections accepted by the one accept loop
	done   chan struct{} // closed when the accept loop ends (the listener closed)
	err    error         // the accept loop's last error, read after done
	quit   chan struct{} // closed by Close
	early  *chanListener
	srv    *http.Server
	served chan struct{} // closed when the start-up server returned
	once   sync.Once     // Handoff's
	closed sync.Once     // Close's
}

// quietWait bounds how long Handoff waits for a start-up connection that has sent nothing
// yet before closing it (its client connects again, to the real server).
const quietWait = 500 * time.Millisecond

// startingBody is the start-up answer of /readyz and of every route but /healthz.
const startingBody = `{"status":"unavailable","message":"starting"}`

// NewStartup prepares start-up answers on ln; Start begins them.
func NewStartup(ln net.Listener) *Startup {
	s := &Startup{ln: ln, conns: make(chan net.Conn), done: make(chan struct{}), quit: make(chan struct{}), served: make(chan struct{})}
	s.early = s.listener()
	s.srv = &http.Server{Handler: http.HandlerFunc(startingAnswer)}
	return s
}

// Start begins accepting on the listener and answering probes.
func (s *Startup) Start() {
	go s.accept()
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(s.early)
	}()
}

// accept hands every accepted connection to whichever listener asks for it next.
func (s *Startup) accept() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.err = err
			return
		}
		select {
		case s.conns <- c:
		case <-s.quit:
			_ = c.Close()
			return
		}
	}
}

// Close closes the bound listener and ends the accept loop; the listener Handoff returned
// does the same when the server closes it.
func (s *Startup) Close() error {
	var err error
	s.closed.Do(func() {
		close(s.quit)
		err = s.ln.Close()
	})
	return err
}

// Handoff ends the start-up answers (the requests they are answering finish first) and
// returns the listener for the real server: closing it closes the bound listener.
func (s *Startup) Handoff() net.Listener {
	s.once.Do(func() {
		_ = s.early.Close()
		ctx, cancel := context.WithTimeout(context.Background(), quietWait)
		defer cancel()
		if s.srv.Shutdown(ctx) != nil {
			_ = s.srv.Close()
		}
		<-s.served
	})
	return s.listener()
}

func (s *Startup) listener() *chanListener {
	return &chanListener{s: s, closed: make(chan struct{})}
}

func startingAnswer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/healthz" {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
		return
	}
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(startingBody))
}

// chanListener is one consumer of the accept loop's connections.
type chanListener struct {
	s      *Startup
	closed chan struct{}
	once   sync.Once
}

// Accept returns the next connection, or net.ErrClosed once this listener or the bound one
// is closed.
func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.s.quit:
		return nil, net.ErrClosed
	case <-l.s.done:
		if l.s.err != nil && !errors.Is(l.s.err, net.ErrClosed) {
			return nil, l.s.err
		}
		return nil, net.ErrClosed
	}
}

// Close stops this consumer. The real server's listener (not the start-up one) also closes
// the bound listener: no more connections are accepted.
func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	if l != l.s.early {
		return l.s.Close()
	}
	return nil
}

// Addr is the bound listener's address.
func (l *chanListener) Addr() net.Addr { return l.s.ln.Addr() }
