// Package smtptest runs an SMTP server on 127.0.0.1 for tests and keeps
// the messages it accepts, built on github.com/emersion/go-smtp. It offers
// STARTTLS or implicit TLS with a self-signed certificate for 127.0.0.1
// (Server.ClientTLS trusts it), AUTH PLAIN, and refusals of recipients or
// messages, so that a mailer can be tested against each.
package smtptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options say what the server offers and refuses. The zero value is a
// plain server: no TLS, no AUTH, every message accepted.
type Options struct {
	// StartTLS offers STARTTLS.
	StartTLS bool
	// ImplicitTLS serves TLS from the first byte (the port 465 way).
	ImplicitTLS bool
	// Username and Password, when set, make AUTH PLAIN required before
	// MAIL and accept only them. AUTH is offered only over TLS.
	Username, Password string
	// RejectRcpt refuses every recipient with 550, quoting the address.
	RejectRcpt bool
	// RejectData, when set, refuses every message with 554 and the text
	// it returns for the message (a content filter may quote a message).
	RejectData func(msg []byte) string
}

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	// Data is the message as sent: headers, a blank line, the body.
	Data []byte
	// User is the name the client authenticated as, or "".
	User string
}

// Server is a running test server.
type Server struct {
	Host string // 127.0.0.1
	Port int
	// ClientTLS trusts the server's certificate, for host 127.0.0.1.
	ClientTLS *tls.Config

	o    Options
	mu   sync.Mutex
	msgs []Message
}

// Start starts a server on 127.0.0.1:0; t.Cleanup stops it.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	cert, pool := selfSigned(t)
	s := &Server{Host: "127.0.0.1", o: o, ClientTLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.MaxMessageBytes = 1 << 20
	srv.ErrorLog = discardLogger{}
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}}
	if o.StartTLS {
		srv.TLSConfig = serverTLS
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	if o.ImplicitTLS {
		ln = tls.NewListener(ln, serverTLS)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type session struct {
	s    *Server
	user string
	msg  Message
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (ss *session) AuthMechanisms() []string {
	if ss.s.o.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.o.Username || password != ss.s.o.Password {
			return errors.New("invalid credentials")
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.o.Username != "" && ss.user == "" {
		return errAuthRequired
	}
	ss.msg = Message{From: from, User: ss.user}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.s.o.RejectRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "<" + to + ">: Recipient address rejected"}
	}
	ss.msg.To = append(ss.msg.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if f := ss.s.o.RejectData; f != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: f(b)}
	}
	ss.msg.Data = b
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, ss.msg)
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset()        { ss.msg = Message{} }
func (ss *session) Logout() error { return nil }

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
