package events_test

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// unicodeHostURLs spell 127.0.0.1 (or another name) with characters IDNA
// folds to ASCII digits and dots: refused at creation in every mode.
var unicodeHostURLs = []string{
	"https://127.0.0.\u2460/in",                          // circled digit one
	"https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/in", // full-width digits
	"https://127\u30020\u30020\u30021/in",                // ideographic full stops
	"https://127.0.0.\u0661/in",                          // Arabic-Indic digit one
	"https://127.0.0.\U0001D7CF/in",                      // mathematical bold digit one
	"https://hooks.\u0435xample.com/in",                  // Cyrillic e
}

// badNotifyEmails are addresses a notify_email may not be.
var badNotifyEmails = []string{
	"a@[127.0.0.1]",
	"a@[IPv6:::1]",
	"a@localhost",
	"a@localhost.",
	"a@127.0.0.1",
	"a@mail.localhost",
	"a@hooks.internal",
	"a@printer.local",
	"p\u0430ypal@example.com",      // Cyrillic a among Latin letters
	"\u0440\u0430ypal@example.com", // Cyrillic r and a
	"ops\u0661@example.com",        // an Arabic-Indic digit
	"ops@\u0435xample.com",         // a non-ASCII domain
	"ops\u200b@example.com",        // a zero-width space
}

// TestWebhookAddressSpellings: hosts spelt with Unicode digits or dots,
// http to a remote host where private destinations are allowed, and
// notify_email addresses that are literals, local names or mixed-script
// look-alikes are refused at creation and update, naming their field;
// ordinary international addresses are accepted.
func TestWebhookAddressSpellings(t *testing.T) {
	for _, allowPrivate := range []bool{true, false} {
		e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = allowPrivate })
		ctx := context.Background()
		w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("ok"))
		if err != nil {
			t.Fatal(err)
		}
		urls := append([]string{"http://hooks.example.com/in", "http://10.0.0.1/in", "http://8.8.8.8/in", "http://foo.localhost/in"}, unicodeHostURLs...)
		for _, u := range urls {
			req := hookRequest("x")
			req.URL = u
			_, err := e.V.CreateWebhook(ctx, e.Mgmt, req)
			wantHookField(t, "CreateWebhook "+u, err, "url")
			_, err = e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req)
			wantHookField(t, "UpdateWebhook "+u, err, "url")
		}
		for _, m := range badNotifyEmails {
			req := hookRequest("x")
			req.NotifyEmail = m
			_, err := e.V.CreateWebhook(ctx, e.Mgmt, req)
			wantHookField(t, "CreateWebhook "+m, err, "notify_email")
			_, err = e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req)
			wantHookField(t, "UpdateWebhook "+m, err, "notify_email")
		}
		for _, m := range []string{"ops@example.com", "ops+hooks@mail.example.co.uk", "j\u00f6rg@example.de",
			"\u3084\u307e\u3060\u592a\u90ce@example.jp", "\u0438\u0432\u0430\u043d@xn--e1afmkfd.xn--p1ai"} {
			req := hookRequest("intl")
			req.NotifyEmail = m
			if _, err := e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req); err != nil {
				t.Errorf("UpdateWebhook notify_email %s: %v", m, err)
			}
		}
	}
	e := vaulttest.NewEnv(t) // private destinations allowed: http to loopback only
	for _, u := range []string{"http://localhost:8080/in", "http://127.0.0.2/in", "http://[::1]:9/in", "https://10.0.0.1/in"} {
		req := hookRequest("local")
		req.URL = u
		if _, err := e.V.CreateWebhook(context.Background(), e.Mgmt, req); err != nil {
			t.Errorf("CreateWebhook %s with private destinations allowed: %v", u, err)
		}
	}
}
