package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
)

// SMTPOptions configures NewSMTP.
type SMTPOptions struct {
	Host     string
	Port     int
	Username string
	Password string
	// TLS is none, starttls (mandatory STARTTLS) or implicit (TLS from the first byte).
	TLS string
	// TLSConfig overrides the TLS client configuration (tests with their own CA).
	TLSConfig *tls.Config
	// HELO is the name sent in EHLO (the local host name when empty).
	HELO string
	// Timeout bounds each SMTP command (30 s when zero).
	Timeout time.Duration
	// Dial opens the TCP connection (the gateway passes its egress policy's DialContext, which
	// refuses private addresses); nil dials directly.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock of the delivery details (time.Now when nil).
	Now func() time.Time
}

// SMTP delivers through an SMTP server with github.com/wneessen/go-mail. Each session keeps one
// connection open and reuses it for the messages that follow (RSET between them).
type SMTP struct {
	cfg SMTPOptions
	now func() time.Time
}

var _ Transport = (*SMTP)(nil)

// NewSMTP checks the options and returns the transport. It starts nothing: each delivery
// opens its session.
func NewSMTP(cfg SMTPOptions) (*SMTP, error) {
	if cfg.Host == "" {
		return nil, errors.New("email: smtp host is required")
	}
	switch cfg.TLS {
	case "", "none", "starttls", "implicit":
	default:
		return nil, fmt.Errorf("email: smtp tls must be none, starttls or implicit, not %q", cfg.TLS)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &SMTP{cfg: cfg, now: cfg.Now}, nil
}

// Name implements Transport.
func (s *SMTP) Name() string { return "smtp" }

// Session implements Transport.
func (s *SMTP) Session() Session { return &smtpSession{t: s} }

type smtpSession struct {
	t      *SMTP
	client *mail.Client
	reused bool
}

func (s *smtpSession) dial(ctx context.Context) error {
	c := s.t.cfg
	opts := []mail.Option{mail.WithTimeout(c.Timeout), mail.WithoutNoop()}
	if c.Port != 0 {
		opts = append(opts, mail.WithPort(c.Port))
	}
	switch c.TLS {
	case "implicit":
		opts = append(opts, mail.WithSSL())
	case "starttls":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if c.TLSConfig != nil {
		opts = append(opts, mail.WithTLSConfig(c.TLSConfig))
	}
	if c.HELO != "" {
		opts = append(opts, mail.WithHELO(c.HELO))
	}
	if c.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(c.Username), mail.WithPassword(c.Password))
	}
	if c.Dial != nil {
		opts = append(opts, mail.WithDialContextFunc(s.t.dialFunc()))
	}
	client, err := mail.NewClient(c.Host, opts...)
	if err != nil {
		return err
	}
	if err := client.DialWithContext(ctx); err != nil {
		return err
	}
	s.client, s.reused = client, false
	return nil
}

// dialFunc is cfg.Dial, with the TLS handshake added for implicit TLS (go-mail only adds it
// to its own dialer).
func (t *SMTP) dialFunc() mail.DialContextFunc {
	c := t.cfg
	if c.TLS != "implicit" {
		return c.Dial
	}
	tc := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	if c.TLSConfig != nil {
		tc = c.TLSConfig.Clone()
		if tc.ServerName == "" {
			tc.ServerName = c.Host
		}
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := c.Dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		tconn := tls.Client(conn, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		return tconn, nil
	}
}

func (s *smtpSession) drop() {
	if s.client != nil {
		_ = s.client.Close()
		s.client = nil
	}
}

// Close implements Session (QUIT and close the connection).
func (s *smtpSession) Close() error {
	s.drop()
	return nil
}

// Deliver implements Session. A reused connection that turns out dead is redialled once
// before the attempt counts as failed.
func (s *smtpSession) Deliver(ctx context.Context, m *Message) Outcome {
	msg, err := Compose(m, s.t.now())
	if err != nil {
		return Outcome{Result: Fail, Detail: "compose: " + err.Error()}
	}
	for try := 0; ; try++ {
		if s.client == nil {
			if err := s.dial(ctx); err != nil {
				return Outcome{Result: Retry, Detail: "connect: " + err.Error()}
			}
		}
		wasReused := s.reused
		err := s.client.Send(msg)
		s.reused = true
		if err == nil {
			return Outcome{Result: Delivered, Code: 250, Detail: acceptDetail(msg, s.t.cfg)}
		}
		out, connBroken := classify(err)
		if connBroken {
			s.drop()
			if wasReused && try == 0 {
				continue
			}
		}
		return out
	}
}

func acceptDetail(msg *mail.Msg, c SMTPOptions) string {
	d := fmt.Sprintf("accepted by %s:%d", c.Host, c.Port)
	if r := strings.TrimSpace(msg.ServerResponse()); r != "" {
		d += ": " + r
	}
	return d
}

// classify maps a go-mail send error to an outcome, and reports whether the connection is
// no longer usable.
func classify(err error) (Outcome, bool) {
	var se *mail.SendError
	if !errors.As(err, &se) {
		return Outcome{Result: Retry, Detail: err.Error()}, true
	}
	code := se.ErrorCode()
	detail := se.Error()
	switch se.Reason {
	case mail.ErrSMTPReset:
		// The message was accepted; only the RSET after it failed.
		return Outcome{Result: Delivered, Code: 250, Detail: "accepted (the connection failed after)"}, true
	case mail.ErrSMTPRcptTo, mail.ErrSMTPData, mail.ErrSMTPDataClose:
		switch {
		case code >= 500:
			return Outcome{Result: Bounce, Code: code, Detail: detail}, false
		case code >= 400:
			return Outcome{Result: Retry, Code: code, Detail: detail}, se.Reason == mail.ErrSMTPDataClose && code == 421
		}
	case mail.ErrSMTPMailFrom:
		switch {
		case code >= 500:
			return Outcome{Result: Fail, Code: code, Detail: detail}, false
		case code >= 400:
			return Outcome{Result: Retry, Code: code, Detail: detail}, code == 421
		}
	case mail.ErrGetSender, mail.ErrGetRcpts, mail.ErrNoUnencoded:
		return Outcome{Result: Fail, Code: code, Detail: detail}, false
	}
	return Outcome{Result: Retry, Code: code, Detail: detail}, true
}
