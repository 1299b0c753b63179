package events

import (
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Check checks req and fills its defaults (status enabled): its name by
// the Vault's rules (CheckName), its notify_email as an address the
// Vault may write to (checkNotifyEmail), the rest by Validate, which
// holds the URL to the outbound policy. It returns Invalid naming each
// field in error.
func (s *Service) Check(req *Request) error {
	fe := unit.FieldErrors{}
	s.CheckName(req.Name, fe)
	Validate(req, s.Policy, fe)
	if req.NotifyEmail != "" {
		checkNotifyEmail("notify_email", req.NotifyEmail, fe)
	}
	return fe.Err()
}

// checkNotifyEmail checks a webhook's notify_email: a bare address
// (unit.ValidateEmail) at a public DNS name whose local part does not
// mix scripts (outbound.MailboxProblem).
func checkNotifyEmail(path, email string, fe unit.FieldErrors) {
	before := len(fe[path])
	unit.ValidateEmail(path, email, fe)
	if len(fe[path]) > before {
		return
	}
	if problem := outbound.MailboxProblem(email); problem != "" {
		fe.Add(path, "%s", problem)
	}
}
