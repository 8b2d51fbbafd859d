// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) on loopback for the
// email product's tests and benchmarks. A Rule decides, per recipient and attempt, whether the
// server accepts, answers 4xx or 5xx; every accepted message is kept for inspection.
package smtptest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	smtp "github.com/emersion/go-smtp"
)

// Reply is a server answer to RCPT or DATA: zero Code means accept.
type Reply struct {
	Code    int
	Message string
}

// Rule decides the reply to a recipient at its n-th RCPT (n counts from 1).
type Rule func(rcpt string, n int) Reply

// Received is one accepted message.
type Received struct {
	From string
	To   []string
	Data []byte
	// TLS reports whether the message came over TLS (STARTTLS or implicit).
	TLS bool
	// User is the authenticated user name ("" without AUTH).
	User string
}

// Header parses the message's header.
func (r Received) Header() mail.Header {
	m, err := mail.ReadMessage(bytes.NewReader(r.Data))
	if err != nil {
		return mail.Header{}
	}
	return m.Header
}

// Server is a running test SMTP server.
type Server struct {
	Addr  string
	Host  string
	Port  int
	srv   *smtp.Server
	ln    net.Listener
	o     Options
	mu    sync.Mutex
	rule  Rule
	lost  Rule
	data  map[string]int
	count map[string]int
	msgs  []Received
	conns int
	// Delay is waited before answering DATA (to keep messages in flight in crash tests);
	// set it with SetDelay.
	Delay time.Duration
	// hold, when set by Hold, keeps each DATA answer until it is closed; held hears of each.
	hold chan struct{}
	held chan string
}

// Hold makes the server keep every DATA answer until release is called (a message in flight
// for as long as a test needs); arrived hears the first recipient of each held message.
func (s *Server) Hold() (arrived <-chan string, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold, s.held = make(chan struct{}), make(chan string, 64)
	var once sync.Once
	hold := s.hold
	return s.held, func() { once.Do(func() { close(hold) }) }
}

// SetDelay sets the wait before each DATA answer.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.Delay = d
	s.mu.Unlock()
}

// Options configures StartWith.
type Options struct {
	Rule Rule
	// TLS, when set, is offered through STARTTLS, or from the first byte with Implicit.
	TLS      *tls.Config
	Implicit bool
	// Users, when set, turns on AUTH PLAIN with these username/password pairs and refuses
	// MAIL from unauthenticated sessions (530).
	Users map[string]string
}

// Start starts a plain server on 127.0.0.1 that accepts everything unless rule says
// otherwise; it is closed when tb ends.
func Start(tb testing.TB, rule Rule) *Server { return StartWith(tb, Options{Rule: rule}) }

// StartWith starts a server with TLS and authentication options.
func StartWith(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := &Server{Addr: "127.0.0.1:0", rule: o.Rule, o: o, count: map[string]int{}, data: map[string]int{}}
	s.Up(tb)
	tb.Cleanup(s.Down)
	return s
}

// Down stops the server: connections in progress are closed and new ones refused (a relay
// that is down), until Up.
func (s *Server) Down() {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.mu.Unlock()
	_ = ln.Close() // Serve may not have taken it yet, then srv.Close would miss it
	_ = srv.Close()
}

// Up starts serving (again, after Down) on the server's address, keeping the messages it
// accepted before.
func (s *Server) Up(tb testing.TB) {
	tb.Helper()
	o := s.o
	var ln net.Listener
	var err error
	if o.Implicit && o.TLS != nil {
		ln, err = tls.Listen("tcp", s.Addr, o.TLS)
	} else {
		ln, err = net.Listen("tcp", s.Addr)
	}
	if err != nil {
		tb.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	ln = countingListener{Listener: ln, s: s}
	s.Host, s.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		if o.Users != nil {
			as := &authSession{session: session{s: s, conn: c}, users: o.Users}
			as.session.user = &as.user
			return as, nil
		}
		return &session{s: s, conn: c}, nil
	}))
	if !o.Implicit {
		srv.TLSConfig = o.TLS
	}
	srv.Domain = "smtptest.local"
	srv.AllowInsecureAuth = true
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.MaxMessageBytes = 20 << 20
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// SetLostReply makes the server keep a message and then answer its DATA with the reply rule
// gives (rcpt is the first recipient, n counts its DATA commands from 1): the "answer lost
// after the message was taken" case (a crash, a timeout) that makes a sender try again. A
// zero Code answers normally.
func (s *Server) SetLostReply(rule Rule) {
	s.mu.Lock()
	s.lost = rule
	s.mu.Unlock()
}

// SetRule replaces the rule.
func (s *Server) SetRule(r Rule) {
	s.mu.Lock()
	s.rule = r
	s.mu.Unlock()
}

// Messages returns a copy of what was accepted so far.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// Len returns how many messages were accepted.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// countingListener counts accepted TCP connections (a session restarts after STARTTLS, so
// sessions are not connections).
type countingListener struct {
	net.Listener
	s *Server
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.s.mu.Lock()
		l.s.conns++
		l.s.mu.Unlock()
	}
	return c, err
}

// Connections returns how many TCP connections were accepted.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Attempts returns how many times rcpt was offered in RCPT.
func (s *Server) Attempts(rcpt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[strings.ToLower(rcpt)]
}

type session struct {
	s    *Server
	conn *smtp.Conn
	from string
	to   []string
	user *string
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	key := strings.ToLower(to)
	ss.s.count[key]++
	n, rule := ss.s.count[key], ss.s.rule
	ss.s.mu.Unlock()
	if rule != nil {
		if r := rule(to, n); r.Code != 0 {
			return reply(r)
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func reply(r Reply) error {
	msg := r.Message
	if msg == "" {
		msg = fmt.Sprintf("test server says %d", r.Code)
	}
	enh := smtp.EnhancedCode{r.Code / 100, 0, 0}
	return &smtp.SMTPError{Code: r.Code, EnhancedCode: enh, Message: msg}
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	delay, hold, held := ss.s.Delay, ss.s.hold, ss.s.held
	ss.s.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if hold != nil {
		if len(ss.to) > 0 {
			held <- strings.ToLower(ss.to[0])
		}
		<-hold
	}
	ss.s.mu.Lock()
	rec := Received{From: ss.from, To: append([]string(nil), ss.to...), Data: b}
	_, rec.TLS = ss.conn.TLSConnectionState()
	if ss.user != nil {
		rec.User = *ss.user
	}
	ss.s.msgs = append(ss.s.msgs, rec)
	lost := ss.s.lost
	var key string
	var n int
	if len(ss.to) > 0 {
		key = strings.ToLower(ss.to[0])
		ss.s.data[key]++
		n = ss.s.data[key]
	}
	ss.s.mu.Unlock()
	if lost != nil && key != "" {
		if r := lost(key, n); r.Code != 0 {
			return reply(r)
		}
	}
	return nil
}

// authSession is a session that needs AUTH PLAIN before MAIL.
type authSession struct {
	session
	users  map[string]string
	authed bool
	user   string
}

func (a *authSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (a *authSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if p, ok := a.users[user]; ok && p == pass {
			a.authed, a.user = true, user
			return nil
		}
		return errors.New("invalid credentials")
	}), nil
}

func (a *authSession) Mail(from string, o *smtp.MailOptions) error {
	if !a.authed {
		return smtp.ErrAuthRequired
	}
	return a.session.Mail(from, o)
}
