package smtpmail_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/smtptest"
	"github.com/tokenvault/tokenvault/smtpmail"
)

const (
	token = "inv_TESTtoken0123456789abcdefghijklmnopqrstuvw"
	link  = "https://app.example.com/join?token=" + token
)

func invitation(acceptURL string) tokenvault.InvitationMail {
	return tokenvault.InvitationMail{
		To:           "ada@example.com",
		TenantID:     "0190a0b0-0000-7000-8000-000000000001",
		TenantName:   "Acme",
		InvitationID: "0190a0b0-0000-7000-8000-000000000002",
		Token:        token,
		AcceptURL:    acceptURL,
		ExpiresAt:    time.Date(2030, 1, 2, 15, 4, 0, 0, time.UTC),
	}
}

// mailer returns a Mailer for srv with cfg's other fields.
func mailer(t *testing.T, srv *smtptest.Server, cfg smtpmail.Config) *smtpmail.Mailer {
	t.Helper()
	cfg.Host, cfg.Port = srv.Host, srv.Port
	if cfg.From == "" {
		cfg.From = "Token Vault <vault@example.com>"
	}
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = srv.ClientTLS
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	m, err := smtpmail.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// received parses the one message srv accepted: its headers and its
// decoded body.
func received(t *testing.T, srv *smtptest.Server) (smtptest.Message, mail.Header, string) {
	t.Helper()
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("the server received %d messages, want 1", len(msgs))
	}
	msg, err := mail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatalf("parsing the message: %v\n%s", err, msgs[0].Data)
	}
	var r io.Reader = msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return msgs[0], msg.Header, string(b)
}

func subject(t *testing.T, h mail.Header) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		t.Fatalf("Subject %q: %v", h.Get("Subject"), err)
	}
	return s
}

// STARTTLS with AUTH: the invitee gets one message with the link, from
// the configured sender, after the client authenticated.
func TestSendStartTLSWithAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{StartTLS: true, Username: "vault", Password: "s3cret-pw"})
	m := mailer(t, srv, smtpmail.Config{Username: "vault", Password: "s3cret-pw"})
	if err := m.SendInvitation(context.Background(), invitation(link)); err != nil {
		t.Fatalf("SendInvitation: %v", err)
	}
	env, h, body := received(t, srv)
	if env.User != "vault" {
		t.Errorf("authenticated as %q, want vault", env.User)
	}
	if env.From != "vault@example.com" || len(env.To) != 1 || env.To[0] != "ada@example.com" {
		t.Errorf("envelope from %q to %q", env.From, env.To)
	}
	if got := h.Get("To"); got != "<ada@example.com>" && got != "ada@example.com" {
		t.Errorf("To: %q", got)
	}
	if from, err := mail.ParseAddress(h.Get("From")); err != nil || from.Address != "vault@example.com" || from.Name != "Token Vault" {
		t.Errorf("From: %q (%v)", h.Get("From"), err)
	}
	if got, want := subject(t, h), "Invitation to join Acme on Token Vault"; got != want {
		t.Errorf("Subject: %q, want %q", got, want)
	}
	if h.Get("Date") == "" || h.Get("Message-Id") == "" {
		t.Errorf("no Date or Message-ID: %v", h)
	}
	for _, want := range []string{"join Acme", link, "until Wed, 2 Jan 2030 15:04 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "/tenants/invitations/accept") {
		t.Errorf("with a link, the body explains the API route too:\n%s", body)
	}
}

// Without an InvitationURL the e-mail carries the token and the route
// that accepts it.
func TestSendTokenWithoutLink(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{ImplicitTLS: true})
	m := mailer(t, srv, smtpmail.Config{TLS: smtpmail.ImplicitTLS})
	if err := m.SendInvitation(context.Background(), invitation("")); err != nil {
		t.Fatalf("SendInvitation: %v", err)
	}
	_, _, body := received(t, srv)
	for _, want := range []string{token, "POST /tenants/invitations/accept", `{"token": "` + token + `"}`, "2 Jan 2030"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
}

// starttls (the default) refuses a server that does not offer STARTTLS:
// nothing is sent.
func TestStartTLSRequired(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	m := mailer(t, srv, smtpmail.Config{})
	err := m.SendInvitation(context.Background(), invitation(link))
	if err == nil {
		t.Fatal("SendInvitation to a server without STARTTLS succeeded")
	}
	if !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("error %q does not say STARTTLS is missing", err)
	}
	assertNoSecrets(t, err, "")
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the server received %d messages", n)
	}
}

// A certificate that does not verify is refused like a missing STARTTLS.
func TestStartTLSUnverifiedCertificate(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{StartTLS: true})
	m, err := smtpmail.New(smtpmail.Config{Host: srv.Host, Port: srv.Port, From: "vault@example.com", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SendInvitation(context.Background(), invitation(link)); err == nil {
		t.Fatal("SendInvitation trusted a self-signed certificate")
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the server received %d messages", n)
	}
}

// none sends in clear text to a loopback server.
func TestNoTLSLoopback(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	m := mailer(t, srv, smtpmail.Config{TLS: smtpmail.NoTLS})
	if err := m.SendInvitation(context.Background(), invitation(link)); err != nil {
		t.Fatalf("SendInvitation: %v", err)
	}
	if _, _, body := received(t, srv); !strings.Contains(body, link) {
		t.Errorf("the body lacks the link:\n%s", body)
	}
}

// A wrong password fails, and the error does not hold it.
func TestAuthRefused(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{StartTLS: true, Username: "vault", Password: "right-pw"})
	m := mailer(t, srv, smtpmail.Config{Username: "vault", Password: "wrong-pw"})
	err := m.SendInvitation(context.Background(), invitation(link))
	if err == nil {
		t.Fatal("SendInvitation with a wrong password succeeded")
	}
	assertNoSecrets(t, err, "wrong-pw")
	// Without credentials the server refuses MAIL.
	m = mailer(t, srv, smtpmail.Config{})
	if err := m.SendInvitation(context.Background(), invitation(link)); err == nil {
		t.Fatal("SendInvitation without AUTH to a server that requires it succeeded")
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the server received %d messages", n)
	}
}

// A refused recipient, or a refused message whose refusal quotes it, is
// an *Error without the token, the link or the recipient's local part.
func TestRefusalsDoNotQuoteSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    smtptest.Options
	}{
		{"recipient", smtptest.Options{StartTLS: true, RejectRcpt: true}},
		{"message", smtptest.Options{StartTLS: true, RejectData: func(msg []byte) string {
			// A content filter quoting the line it objects to.
			for _, line := range strings.Split(string(msg), "\r\n") {
				if strings.Contains(line, "inv_") {
					return "Message refused: suspicious link " + line
				}
			}
			return "Message refused"
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.Start(t, tc.o)
			m := mailer(t, srv, smtpmail.Config{})
			err := m.SendInvitation(context.Background(), invitation(link))
			if err == nil {
				t.Fatal("SendInvitation succeeded")
			}
			var e *smtpmail.Error
			if !errors.As(err, &e) || e.Temporary() {
				t.Errorf("error %T (temporary %v), want a permanent *smtpmail.Error", err, e != nil && e.Temporary())
			}
			if !strings.Contains(err.Error(), "55") || !strings.Contains(err.Error(), "example.com") {
				t.Errorf("error %q does not say what the server answered", err)
			}
			t.Logf("error: %v", err)
			assertNoSecrets(t, err, "")
			if errors.Unwrap(err) != nil {
				t.Errorf("the error wraps %v, which may quote secrets", errors.Unwrap(err))
			}
		})
	}
}

// assertNoSecrets fails if err's text holds a piece of the token (8
// characters of it: a quoted message may cut the link at a line break),
// the invitee's local part or password.
func assertNoSecrets(t *testing.T, err error, password string) {
	t.Helper()
	for i := 0; i+8 <= len(token); i++ {
		if strings.Contains(err.Error(), token[i:i+8]) {
			t.Errorf("error %q holds %q of the token", err, token[i:i+8])
		}
	}
	for _, s := range []string{"ada@", password} {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q holds %q", err, s)
		}
	}
}

// A tenant name with CR and LF cannot add a header or a recipient: go-mail
// encodes it (RFC 2047), and the subject shows it on one line.
func TestTenantNameCannotInjectHeaders(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{StartTLS: true})
	m := mailer(t, srv, smtpmail.Config{})
	inv := invitation(link)
	inv.TenantName = "Acme\r\nBcc: eve@example.net\r\nX-Injected: yes\n\nbody"
	if err := m.SendInvitation(context.Background(), inv); err != nil {
		t.Fatalf("SendInvitation: %v", err)
	}
	env, h, body := received(t, srv)
	if len(env.To) != 1 || env.To[0] != "ada@example.com" {
		t.Errorf("envelope recipients %q, want only ada@example.com", env.To)
	}
	for _, k := range []string{"Bcc", "Cc", "X-Injected"} {
		if v, ok := h[k]; ok {
			t.Errorf("injected header %s: %q", k, v)
		}
	}
	got := subject(t, h)
	if strings.ContainsAny(got, "\r\n") || !strings.HasPrefix(got, "Invitation to join Acme") {
		t.Errorf("Subject: %q", got)
	}
	if !strings.Contains(body, link) {
		t.Errorf("the body lacks the link:\n%s", body)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	ok := smtpmail.Config{Host: "smtp.example.com", From: "vault@example.com"}
	for _, tc := range []struct {
		name   string
		change func(*smtpmail.Config)
	}{
		{"no host", func(c *smtpmail.Config) { c.Host = "" }},
		{"no from", func(c *smtpmail.Config) { c.From = "" }},
		{"bad from", func(c *smtpmail.Config) { c.From = "vault" }},
		{"user without password", func(c *smtpmail.Config) { c.Username = "vault" }},
		{"password without user", func(c *smtpmail.Config) { c.Password = "pw" }},
		{"unknown tls mode", func(c *smtpmail.Config) { c.TLS = "opportunistic" }},
		{"none to a remote host", func(c *smtpmail.Config) { c.TLS = smtpmail.NoTLS }},
		{"bad port", func(c *smtpmail.Config) { c.Port = 70000 }},
		{"negative timeout", func(c *smtpmail.Config) { c.Timeout = -time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.change(&cfg)
			if _, err := smtpmail.New(cfg); err == nil {
				t.Errorf("New(%+v) succeeded", cfg)
			}
		})
	}
	if _, err := smtpmail.New(ok); err != nil {
		t.Errorf("New(%+v) = %v", ok, err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := smtpmail.New(smtpmail.Config{Host: host, From: "vault@example.com", TLS: smtpmail.NoTLS}); err != nil {
			t.Errorf("New with none to %s: %v", host, err)
		}
	}
}

// A server that accepts the connection and never answers fails the send
// by ctx's deadline, though Timeout is longer.
func TestContextDeadline(t *testing.T) {
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
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	m, err := smtpmail.New(smtpmail.Config{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, From: "vault@example.com", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err = m.SendInvitation(ctx, invitation(link))
	if err == nil {
		t.Fatal("SendInvitation to a silent server succeeded")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("SendInvitation took %v, want about ctx's 1s", d)
	}
	assertNoSecrets(t, err, "")
}
