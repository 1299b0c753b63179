package testfake

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

func TestClockMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Advance(time.Second); c.Now() })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("after ten Advance(1s) from two goroutines: %v", got)
	}
}

func TestMailerKeepsAndFails(t *testing.T) {
	ctx := context.Background()
	var m Mailer
	if m.Token() != "" || m.Count() != 0 {
		t.Fatal("a new Mailer has mail")
	}
	if err := m.SendInvitation(ctx, tokenvault.InvitationMail{Token: "a"}); err != nil {
		t.Fatal(err)
	}
	m.Fail(errors.New("smtp: 421"))
	if err := m.SendInvitation(ctx, tokenvault.InvitationMail{Token: "b"}); err == nil {
		t.Fatal("a failing Mailer sent")
	}
	m.Fail(nil)
	if err := m.SendInvitation(ctx, tokenvault.InvitationMail{Token: "c"}); err != nil {
		t.Fatal(err)
	}
	if m.Count() != 2 || m.Token() != "c" || m.Last(t).Token != "c" {
		t.Fatalf("Count %d, Token %q: want 2 and the last one sent", m.Count(), m.Token())
	}
}
