// Package smtpmail sends Token Vault's invitation e-mails over SMTP: a
// [tokenvault.Mailer] for Options.Mailer, built on
// github.com/wneessen/go-mail.
//
//	m, err := smtpmail.New(smtpmail.Config{
//		Host: "smtp.example.com", Username: "vault", Password: password,
//		From: "Token Vault <vault@example.com>",
//	})
//	v, err := tokenvault.Open(ctx, tokenvault.Options{Mailer: m, InvitationURL: "https://app.example.com/join", ...})
//
// # Transport security
//
// [Config].TLS is one of:
//
//   - [StartTLS] (the default; port 587): the connection is upgraded with
//     STARTTLS before anything else is sent, and a server that does not
//     offer STARTTLS, or whose certificate does not verify, gets nothing:
//     the send fails. There is no opportunistic mode, because the e-mail
//     carries a credential.
//   - [ImplicitTLS] ("tls", port 465): TLS from the first byte.
//   - [NoTLS] ("none", port 25): plain text. Allowed only when Host is a
//     loopback address or "localhost" (a relay on the same machine, or a
//     test server); New refuses it for any other host.
//
// Certificates are verified against the system roots for Host, or as
// [Config].TLSConfig says. With a Username, the client authenticates
// (SCRAM, CRAM-MD5, PLAIN or LOGIN, the strongest the server offers; PLAIN
// and LOGIN only over TLS) and fails if the server offers no AUTH.
//
// # The e-mail
//
// One plain-text message to the invited address, From [Config].From, with
// the subject "Invitation to join <tenant> on Token Vault". The body holds
// the acceptance link (Options.InvitationURL with the token added) or,
// when the Vault has no InvitationURL, the token and how to accept it
// (POST /tenants/invitations/accept with {"token": "..."}), and when the
// invitation expires. Headers are built by go-mail: addresses are parsed,
// and a tenant name is encoded (RFC 2047), so no name can add a header;
// control characters in the name are replaced by spaces besides.
//
// # Errors and secrets
//
// The token and the link are a credential: whoever holds them can join the
// tenant. They are written only into the message. A failed send returns an
// [*Error] whose text is the SMTP exchange's error with the token, the
// link, the password and the recipient's local part removed, and that does
// not wrap the underlying error (which may quote them). The Vault answers
// Unavailable and saves nothing; it logs only the error's type, so a host
// program that wants the reason logs the *Error itself (the tokenvault
// server does). Nothing in this package logs.
package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"

	gomail "github.com/wneessen/go-mail"

	"github.com/tokenvault/tokenvault"
)

// TLSMode says how the connection to the SMTP server is secured.
type TLSMode string

// The TLS modes; see the package doc.
const (
	StartTLS    TLSMode = "starttls"
	ImplicitTLS TLSMode = "tls"
	NoTLS       TLSMode = "none"
)

// DefaultTimeout bounds one send: connecting, the SMTP exchange and the
// message, when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config configures a Mailer. Host and From are required.
type Config struct {
	// Host is the SMTP server's name or IP address, also the name its
	// certificate must have (unless TLSConfig.ServerName says otherwise).
	Host string
	// Port defaults by TLS mode: 587 for starttls, 465 for tls, 25 for none.
	Port int
	// Username and Password authenticate to the server; both or neither.
	Username string
	Password string
	// From is the sender, a bare address or "Name <address>".
	From string
	// TLS is StartTLS when empty.
	TLS TLSMode
	// Timeout bounds a send; 0 means DefaultTimeout.
	Timeout time.Duration
	// TLSConfig, when not nil, replaces the default TLS configuration
	// (system roots, ServerName Host, TLS 1.2 at least); it is cloned, and
	// its ServerName defaults to Host.
	TLSConfig *tls.Config
}

// Mailer sends invitation e-mails; it implements tokenvault.Mailer and is
// safe for concurrent use (each send has its own connection).
type Mailer struct {
	cfg  Config
	from *mail.Address
	opts []gomail.Option // clipped: each send appends its own timeout
}

var _ tokenvault.Mailer = (*Mailer)(nil)

// New checks cfg and returns its Mailer. It does not connect.
func New(cfg Config) (*Mailer, error) {
	if cfg.TLS == "" {
		cfg.TLS = StartTLS
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	from, err := mail.ParseAddress(cfg.From)
	switch {
	case cfg.Host == "" || strings.ContainsAny(cfg.Host, "/ \r\n"):
		return nil, errors.New("smtpmail: Host must be a host name or IP address")
	case cfg.Port < 0 || cfg.Port > 65535:
		return nil, fmt.Errorf("smtpmail: Port must be 1 to 65535, not %d", cfg.Port)
	case err != nil:
		return nil, errors.New("smtpmail: From must be an e-mail address such as vault@example.com or \"Token Vault <vault@example.com>\"")
	case (cfg.Username == "") != (cfg.Password == ""):
		return nil, errors.New("smtpmail: Username and Password go together")
	case cfg.Timeout < 0:
		return nil, errors.New("smtpmail: Timeout must not be negative")
	case cfg.TLS == NoTLS && !isLoopback(cfg.Host):
		return nil, fmt.Errorf("smtpmail: TLS mode none sends invitation links in clear text; it is allowed only to a loopback host, not %q", cfg.Host)
	}
	var opts []gomail.Option
	switch cfg.TLS {
	case StartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
		if cfg.Port == 0 {
			cfg.Port = 587
		}
	case ImplicitTLS:
		opts = append(opts, gomail.WithSSL())
		if cfg.Port == 0 {
			cfg.Port = 465
		}
	case NoTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		if cfg.Port == 0 {
			cfg.Port = 25
		}
	default:
		return nil, fmt.Errorf("smtpmail: TLS must be starttls, tls or none, not %q", cfg.TLS)
	}
	opts = append(opts, gomail.WithPort(cfg.Port))
	if cfg.TLSConfig != nil {
		tc := cfg.TLSConfig.Clone()
		if tc.ServerName == "" {
			tc.ServerName = cfg.Host
		}
		opts = append(opts, gomail.WithTLSConfig(tc))
	}
	if cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	return &Mailer{cfg: cfg, from: from, opts: slices.Clip(opts)}, nil
}

// isLoopback reports whether host is "localhost" or a loopback IP address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SendInvitation sends inv to inv.To, within Config.Timeout or ctx's
// deadline if that is sooner. It returns an *Error when the message could
// not be handed to the server.
func (m *Mailer) SendInvitation(ctx context.Context, inv tokenvault.InvitationMail) error {
	msg := gomail.NewMsg()
	msg.FromMailAddress(m.from)
	if err := msg.To(inv.To); err != nil {
		return m.fail(inv, err)
	}
	tenant := oneLine(inv.TenantName)
	if tenant == "" {
		tenant = inv.TenantID
	}
	msg.Subject("Invitation to join " + tenant + " on Token Vault")
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, body(inv, tenant))
	// go-mail watches ctx only while it connects; a deadline of ctx
	// shorter than Timeout bounds the whole exchange instead.
	timeout := m.cfg.Timeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	c, err := gomail.NewClient(m.cfg.Host, append(m.opts, gomail.WithTimeout(timeout))...)
	if err != nil {
		return m.fail(inv, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return m.fail(inv, err)
	}
	return nil
}

// body is the text of the invitation e-mail.
func body(inv tokenvault.InvitationMail, tenant string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are invited to join %s on Token Vault as an administrator.\n\n", tenant)
	if inv.AcceptURL != "" {
		fmt.Fprintf(&b, "To accept, open this link:\n\n%s\n\n", inv.AcceptURL)
	} else {
		fmt.Fprintf(&b, "Your invitation token is:\n\n%s\n\n", inv.Token)
		fmt.Fprintf(&b, "To accept, give it to the application you use with Token Vault, or send it\n"+
			"to the Token Vault API (no API key needed):\n\n"+
			"POST /tenants/invitations/accept\nContent-Type: application/json\n\n{\"token\": %q}\n\n", inv.Token)
	}
	fmt.Fprintf(&b, "The invitation works once, until %s.\n", inv.ExpiresAt.UTC().Format("Mon, 2 Jan 2006 15:04 MST"))
	b.WriteString("Whoever has this e-mail can accept it: do not forward it. If you did not\n" +
		"expect an invitation, ignore this e-mail.\n")
	return b.String()
}

// oneLine replaces control characters (CR and LF included) by spaces and
// trims the result.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

// Error is a failed send. Its text is the SMTP client's error with every
// word that holds a piece of the invitation's token (so the link too),
// the password and the recipient's local part replaced; it does not wrap
// that error.
type Error struct {
	msg       string
	temporary bool
}

func (e *Error) Error() string { return e.msg }

// Temporary reports whether the server refused with a 4xx reply (try
// again later).
func (e *Error) Temporary() bool { return e.temporary }

func (m *Mailer) fail(inv tokenvault.InvitationMail, err error) error {
	var se *gomail.SendError
	temp := errors.As(err, &se) && se.IsTemp()
	text := err.Error()
	if m.cfg.Password != "" {
		text = strings.ReplaceAll(text, m.cfg.Password, "[password]")
	}
	text = strings.ReplaceAll(text, inv.To, "[recipient]@"+domain(inv.To))
	return &Error{msg: fmt.Sprintf("smtpmail: invitation %s to a recipient at %s not sent via %s: %s",
		inv.InvitationID, domain(inv.To), net.JoinHostPort(m.cfg.Host, fmt.Sprint(m.cfg.Port)), redactToken(text, inv.Token)), temporary: temp}
}

// tokenWindow is the length of the pieces of a token that redactToken
// looks for.
const tokenWindow = 8

// redactToken replaces every word of text that holds tokenWindow
// consecutive characters of token. A server's reply may quote the message
// as encoded, where a quoted-printable line break can cut the token (and
// its link) in two: each part is found by its pieces.
func redactToken(text, token string) string {
	if len(token) < tokenWindow {
		return strings.ReplaceAll(text, token, "[token]")
	}
	words := strings.Fields(text)
	for i, w := range words {
		for j := 0; j+tokenWindow <= len(token); j++ {
			if strings.Contains(w, token[j:j+tokenWindow]) {
				words[i] = "[redacted]"
				break
			}
		}
	}
	return strings.Join(words, " ")
}

// domain returns the part of an address after its last @.
func domain(addr string) string {
	return addr[strings.LastIndexByte(addr, '@')+1:]
}
