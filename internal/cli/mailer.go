package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/smtpmail"
)

// newMailer returns the Mailer the -smtp-* flags describe and logs, once,
// how invitations will be delivered. Without -smtp-host it is unsentMailer.
//
// The SMTP password comes from -smtp-password-file or the environment
// variable TOKENVAULT_SMTP_PASSWORD, never from a flag (a command line is
// visible to every user of the machine), and is never logged.
func newMailer(cfg config, getenv func(string) string, log *slog.Logger) (tokenvault.Mailer, error) {
	if cfg.smtpHost == "" {
		log.Warn("SMTP is not configured (-smtp-host): invitations cannot be e-mailed; they are created, and their links are not logged, so nobody can accept them")
		return unsentMailer{log}, nil
	}
	password := getenv("TOKENVAULT_SMTP_PASSWORD")
	if cfg.smtpPasswordFile != "" {
		if password != "" {
			return nil, errors.New("give the SMTP password in -smtp-password-file or TOKENVAULT_SMTP_PASSWORD, not both")
		}
		b, err := os.ReadFile(cfg.smtpPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("-smtp-password-file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
		if password == "" {
			return nil, fmt.Errorf("-smtp-password-file %s is empty", cfg.smtpPasswordFile)
		}
	}
	if (cfg.smtpUser == "") != (password == "") {
		return nil, errors.New("-smtp-user and its password (-smtp-password-file or TOKENVAULT_SMTP_PASSWORD) go together")
	}
	m, err := smtpmail.New(smtpmail.Config{
		Host: cfg.smtpHost, Port: cfg.smtpPort, Username: cfg.smtpUser, Password: password,
		From: cfg.smtpFrom, TLS: smtpmail.TLSMode(cfg.smtpTLS), Timeout: cfg.smtpTimeout,
	})
	if err != nil {
		// smtpmail's errors name no password.
		return nil, err
	}
	log.Info("invitations are e-mailed by SMTP", "smtp_host", cfg.smtpHost, "smtp_tls", cfg.smtpTLS,
		"smtp_user", cfg.smtpUser, "invitation_url", cfg.invitationURL != "")
	return loggedMailer{m, log}, nil
}

// unsentMailer stands in for SMTP when none is configured: the invitation
// is created (the Vault saves it once its Mailer succeeds), and its link
// is dropped. It logs that, with the tenant, the invitation and the
// recipient's domain: never the link or token (a credential that lets its
// holder join the tenant), nor the whole address. An operator who
// configures SMTP later resends the invitation, which e-mails a new link.
type unsentMailer struct {
	log *slog.Logger
}

func (m unsentMailer) SendInvitation(_ context.Context, inv tokenvault.InvitationMail) error {
	m.log.Warn("invitation created but not e-mailed (no SMTP configured); resend it once -smtp-host is set",
		"tenant", inv.TenantID, "invitation", inv.InvitationID, "recipient_domain", domainOf(inv.To))
	return nil
}

// loggedMailer logs the outcome of each SMTP send. The Vault logs only
// the type of a Mailer's error; smtpmail's errors carry no token, link,
// password or recipient local part, so their text is logged here, for
// the operator to see why a send failed.
type loggedMailer struct {
	m   tokenvault.Mailer
	log *slog.Logger
}

func (m loggedMailer) SendInvitation(ctx context.Context, inv tokenvault.InvitationMail) error {
	err := m.m.SendInvitation(ctx, inv)
	attrs := []any{"tenant", inv.TenantID, "invitation", inv.InvitationID, "recipient_domain", domainOf(inv.To)}
	var se *smtpmail.Error
	switch {
	case err == nil:
		m.log.Info("invitation e-mailed", attrs...)
	case errors.As(err, &se):
		m.log.Warn("invitation e-mail not sent", append(attrs, "temporary", se.Temporary(), "err", se.Error())...)
	default:
		m.log.Warn("invitation e-mail not sent", append(attrs, "err_type", fmt.Sprintf("%T", err))...)
	}
	return err
}

// domainOf returns the part of an address after its last @.
func domainOf(addr string) string {
	return addr[strings.LastIndexByte(addr, '@')+1:]
}
