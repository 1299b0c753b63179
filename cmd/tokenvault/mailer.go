package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tokenvault/tokenvault"
)

// logMailer "sends" invitation e-mails by writing them to the log, so the
// server works on a laptop with no mail relay. The e-mail holds the
// acceptance token, which lets its holder join the tenant: use it for
// development only.
//
// To send real mail, give tokenvault.Options a Mailer built on net/smtp:
//
//	type smtpMailer struct {
//		addr, from string // "smtp.example.com:587", "vault@example.com"
//		auth       smtp.Auth // smtp.PlainAuth("", user, password, "smtp.example.com")
//	}
//
//	func (m smtpMailer) SendInvitation(ctx context.Context, inv tokenvault.InvitationMail) error {
//		msg := "From: " + m.from + "\r\nTo: " + inv.To + "\r\n" +
//			"Subject: You are invited to " + inv.TenantName + "\r\n\r\n" +
//			"Accept before " + inv.ExpiresAt.Format(time.RFC1123) + ": " + inv.AcceptURL + "\r\n"
//		return smtp.SendMail(m.addr, m.auth, m.from, []string{inv.To}, []byte(msg))
//	}
//
// and set Options.InvitationURL to the page of your application that posts
// the token to /tenants/invitations/accept.
type logMailer struct {
	log *slog.Logger
}

func (m logMailer) SendInvitation(_ context.Context, inv tokenvault.InvitationMail) error {
	body := fmt.Sprintf("You are invited to join %s. Accept before %s with:\n"+
		"  curl -X POST -H 'Content-Type: application/json' -d '{\"token\": %q}' http://<server>/tenants/invitations/accept",
		inv.TenantName, inv.ExpiresAt.Format(time.RFC1123), inv.Token)
	m.log.Info("invitation e-mail (development mailer: not sent)", "to", inv.To, "invitation", inv.InvitationID, "body", body)
	return nil
}
