package email_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// selfSigned returns a server TLS config for 127.0.0.1 and a client config trusting it.
func selfSigned(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "smtptest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

// TestSMTPTLSAndAuth delivers through STARTTLS and implicit TLS with AUTH, and checks that
// wrong credentials and a server without STARTTLS are retried (never sent in clear).
func TestSMTPTLSAndAuth(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	users := map[string]string{"mailer": "s3cret"}
	cases := []struct {
		name     string
		opts     smtptest.Options
		cfg      email.SMTPOptions
		want     email.Result
		wantTLS  bool
		wantUser string
	}{
		{"starttls with auth", smtptest.Options{TLS: serverTLS, Users: users},
			email.SMTPOptions{TLS: "starttls", Username: "mailer", Password: "s3cret", TLSConfig: clientTLS}, email.Delivered, true, "mailer"},
		{"implicit tls with auth", smtptest.Options{TLS: serverTLS, Implicit: true, Users: users},
			email.SMTPOptions{TLS: "implicit", Username: "mailer", Password: "s3cret", TLSConfig: clientTLS}, email.Delivered, true, "mailer"},
		{"plain without auth", smtptest.Options{},
			email.SMTPOptions{TLS: "none"}, email.Delivered, false, ""},
		{"wrong password", smtptest.Options{TLS: serverTLS, Users: users},
			email.SMTPOptions{TLS: "starttls", Username: "mailer", Password: "nope", TLSConfig: clientTLS}, email.Retry, false, ""},
		{"starttls required but not offered", smtptest.Options{},
			email.SMTPOptions{TLS: "starttls", TLSConfig: clientTLS}, email.Retry, false, ""},
		{"untrusted certificate", smtptest.Options{TLS: serverTLS},
			email.SMTPOptions{TLS: "starttls"}, email.Retry, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.StartWith(t, tc.opts)
			cfg := tc.cfg
			cfg.Host, cfg.Port, cfg.HELO, cfg.Timeout = srv.Host, srv.Port, "gatehouse.test", 5*time.Second
			tr, err := email.NewSMTP(cfg)
			if err != nil {
				t.Fatal(err)
			}
			sess := tr.Session()
			defer sess.Close()
			m := &email.Message{ID: "msg_01jd0000000000000000000000", From: email.Address{Email: "a@acme.test"},
				To: email.Address{Email: "b@example.com"}, Subject: "s", Text: "t", HTML: "<p>t</p>"}
			out := sess.Deliver(context.Background(), m)
			if out.Result != tc.want {
				t.Fatalf("Deliver = %+v, want result %d", out, tc.want)
			}
			got := srv.Messages()
			if tc.want != email.Delivered {
				if len(got) != 0 {
					t.Errorf("server received %d messages, want none", len(got))
				}
				return
			}
			if len(got) != 1 || got[0].TLS != tc.wantTLS || got[0].User != tc.wantUser {
				t.Fatalf("received %+v, want 1 message with TLS=%v user %q", got, tc.wantTLS, tc.wantUser)
			}
			// The session reuses its connection for the next message.
			if out := sess.Deliver(context.Background(), m); out.Result != email.Delivered || srv.Connections() != 1 {
				t.Errorf("second Deliver = %+v over %d connections, want delivered over 1", out, srv.Connections())
			}
			if !strings.Contains(string(got[0].Data), "multipart/alternative") {
				t.Error("message is not multipart/alternative")
			}
		})
	}
}
