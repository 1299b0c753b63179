package events

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/webhooks"
)

// TestSendSignsTheEnvelope: an attempt POSTs the envelope around the
// stored event, signed with the webhook's secret and, within its
// overlap, the previous one; the receiver can verify either.
func TestSendSignsTheEnvelope(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	oldSecret, newSecret := NewSecret(), NewSecret()
	got := make(chan *http.Request, 1)
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
		io.WriteString(w, "thanks")
	}))
	defer srv.Close()
	d := NewDispatcher(Config{Policy: outbound.Policy{AllowPrivate: true}, HTTPClient: srv.Client(),
		Now: func() time.Time { return at }})
	hook := &Webhook{URL: srv.URL + "/in", Secret: newSecret, PreviousSecret: oldSecret, PreviousUntil: at.Add(time.Hour)}
	rec := &Delivery{EventID: "evt", Event: []byte(`{"id":"evt"}`)}
	a := d.Send(context.Background(), hook, rec)
	if !a.OK() || a.Status != 200 || string(a.Response) != "thanks" || !a.At.Equal(at) {
		t.Fatalf("Send = %+v, want OK, 200, thanks", a)
	}
	r, body := <-got, <-bodies
	if want := string(Body(rec.Event, at)); string(body) != want {
		t.Errorf("body = %s, want %s", body, want)
	}
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Errorf("webhook-signature = %q, want two signatures", r.Header.Get("webhook-signature"))
	}
	for _, s := range []string{newSecret, oldSecret} {
		if err := webhooks.VerifyAt(s, r.Header, body, at); err != nil {
			t.Errorf("VerifyAt(a secret) = %v", err)
		}
	}
}

// TestSendFailures: a refused URL is not dialled, a redirect is not
// followed, and a 503's Retry-After is kept.
func TestSendFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	now := func() time.Time { return time.Now() }
	rec := &Delivery{EventID: "evt", Event: []byte(`{}`)}
	strict := NewDispatcher(Config{Now: now})
	if a := strict.Send(context.Background(), &Webhook{URL: srv.URL, Secret: NewSecret()}, rec); a.OK() || a.Status != 0 ||
		!strings.HasPrefix(a.Err, "the webhook's URL ") {
		t.Errorf("Send to a loopback URL without AllowPrivate = %+v, want refused", a)
	}
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	d := NewDispatcher(Config{Policy: outbound.Policy{AllowPrivate: true}, HTTPClient: client, Now: now})
	if a := d.Send(context.Background(), &Webhook{URL: srv.URL + "/moved", Secret: NewSecret()}, rec); a.OK() ||
		a.Err != "the receiver answered 302, a redirect: redirects are not followed" {
		t.Errorf("Send to a redirect = %+v", a)
	}
	if a := d.Send(context.Background(), &Webhook{URL: srv.URL + "/busy", Secret: NewSecret()}, rec); a.OK() ||
		a.Status != 503 || a.RetryAfter != 2*time.Minute {
		t.Errorf("Send to a busy receiver = %+v, want 503 with a 2m Retry-After", a)
	}
	if a := d.Send(context.Background(), &Webhook{URL: srv.URL, Secret: "whsec_bad"}, rec); a.Err != "the webhook's signing secret is malformed" {
		t.Errorf("Send with a malformed secret = %+v", a)
	}
}
