// Package testfake holds the test doubles that the tests of several
// packages share, so that each is written once: a Clock that moves only
// when told to, for Options.Now, and a Mailer that keeps the invitation
// e-mails it is asked to send, for Options.Mailer. Only tests import it.
//
// The root package's own internal tests (package tokenvault) cannot import
// it (it imports tokenvault); they keep their few doubles in one file.
package testfake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Clock is a clock that moves only when told to. Its methods may be called
// from several goroutines at once.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time; pass it as Options.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d forward (backward if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Mailer is a tokenvault.Mailer that keeps every invitation e-mail it is
// asked to send, or refuses them while Fail has set an error. The zero
// value sends. Its methods may be called from several goroutines at once.
type Mailer struct {
	mu       sync.Mutex
	sent     []tokenvault.InvitationMail
	disabled []tokenvault.WebhookDisabledMail
	err      error
}

var _ tokenvault.WebhookNotifier = (*Mailer)(nil)

// SendWebhookDisabled keeps mail, or returns the error Fail set.
func (m *Mailer) SendWebhookDisabled(_ context.Context, mail tokenvault.WebhookDisabledMail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.disabled = append(m.disabled, mail)
	return nil
}

// WebhooksDisabled returns the webhook-disabled e-mails sent.
func (m *Mailer) WebhooksDisabled() []tokenvault.WebhookDisabledMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]tokenvault.WebhookDisabledMail(nil), m.disabled...)
}

var _ tokenvault.Mailer = (*Mailer)(nil)

// SendInvitation keeps mail, or returns the error Fail set.
func (m *Mailer) SendInvitation(_ context.Context, mail tokenvault.InvitationMail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.sent = append(m.sent, mail)
	return nil
}

// Fail makes every later SendInvitation return err; nil sends again.
func (m *Mailer) Fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
}

// Count returns how many e-mails were sent.
func (m *Mailer) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// Last returns the last e-mail sent, failing t if there is none.
func (m *Mailer) Last(t testing.TB) tokenvault.InvitationMail {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no e-mail sent")
	}
	return m.sent[len(m.sent)-1]
}

// Token returns the invitation token of the last e-mail sent, or "" if
// none was.
func (m *Mailer) Token() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		return ""
	}
	return m.sent[len(m.sent)-1].Token
}
