package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tokenvault/tokenvault/webhooks"
)

// received is one request a test receiver got, with when it got it (to
// verify its signature at that time).
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// eventType is the event.type of a delivery's body.
func (r received) eventType(t *testing.T) string {
	t.Helper()
	var env struct {
		Event struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("delivery body %q: %v", r.body, err)
	}
	return env.Event.Type
}

// receiver is a loopback webhook receiver: it answers 200 with the XSS
// payload in its plain-text body (the console shows the answer's first bytes) and
// passes each request on.
func receiver(t *testing.T) (string, <-chan received) {
	t.Helper()
	ch := make(chan received, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ch <- received{header: r.Header.Clone(), body: body, at: time.Now()}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "received "+xss)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

// next is the next request of typ the receiver gets, within wait (others
// are skipped).
func next(t *testing.T, ch <-chan received, typ string) received {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case r := <-ch:
			if r.eventType(t) == typ {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s delivery within %v", typ, wait)
		}
	}
}

// verifies reports whether r's signature verifies with secret.
func verifies(r received, secret string) bool {
	return webhooks.VerifyAt(secret, r.header, r.body, r.at) == nil
}

// TestConsoleWebhooks: the webhooks page in the browser, against a
// loopback receiver (the test's Vault allows private destinations): a
// refused create shows its errors, a webhook subscribed to token.created
// shows its secret once, a card tokenized on the tokens page is delivered
// (signed with that secret) and seen succeeded in the deliveries list,
// then redelivered; a test event; the secret rotated (deliveries then
// signed with both); six deliveries paged by cursor, five a page; disabled, enabled and renamed; 390 px wide; deleted.
// The XSS payload is in the webhook's name and the receiver's answer.
func TestConsoleWebhooks(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	recvURL, got := receiver(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	signIn(t, ctx, mgmt)
	open(t, ctx, "applications")
	tokenizer := createApp(t, ctx, "tokenizer", "private", `[{"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:create", "token:read"]}]`)

	// The form: events from the catalogue, "*" and the high-volume ones
	// explained; an empty form refused, with errors beside the fields.
	open(t, ctx, "webhooks")
	until(t, ctx, "event types", `document.querySelector('#event-all') && document.querySelector('#event-token-created') &&
		document.querySelector('#event-token-read').parentElement.textContent.includes('high-volume')`)
	click(t, ctx, "#webhook-create")
	until(t, ctx, "errors of an empty form", `document.querySelector('#webhook-form .form-error').textContent !== '' &&
		document.querySelector('#webhook-form [data-error-for=url]').textContent !== ''`)
	name := "Receiver " + xss
	set(t, ctx, "#webhook-name", name)
	set(t, ctx, "#webhook-url", recvURL+"/hooks")
	click(t, ctx, "#event-token-created")
	click(t, ctx, "#webhook-create")
	do(t, ctx, "the secret, once", chromedp.WaitVisible(chromedp.CSS(`#new-secret`)))
	secret := text(t, ctx, "#new-secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown: %q", secret)
	}
	click(t, ctx, "#copy-secret")
	until(t, ctx, "copied (or selected to copy)", `document.querySelector('#copy-secret-status').textContent !== ''`)
	until(t, ctx, "webhook listed", `[...document.querySelectorAll('#webhook-list tr')].some(r => r.querySelector('.webhook-name')?.textContent === `+js(name)+` &&
		r.querySelector('.webhook-events').textContent === 'token.created' && r.querySelector('.webhook-status').textContent === 'enabled')`)
	click(t, ctx, "#dismiss-secret")
	until(t, ctx, "secret gone", `!document.querySelector('#new-secret') && !document.body.textContent.includes(`+js(secret)+`)`)
	noXSS(t, ctx, "webhooks")
	open(t, ctx, "overview")
	until(t, ctx, "the webhooks figure", `document.querySelector('#figures [data-figure="/webhooks"] .n')?.textContent === '1'`)

	// A card tokenized with another key: delivered, signed with the
	// secret shown.
	signOut(t, ctx, mgmt)
	signIn(t, ctx, tokenizer)
	open(t, ctx, "tokens")
	set(t, ctx, "#new-token-type", "card")
	set(t, ctx, "#card-number", "4242 4242 4242 4242")
	set(t, ctx, "#card-month", "12")
	set(t, ctx, "#card-year", "2031")
	click(t, ctx, "#token-create")
	do(t, ctx, "created token", chromedp.WaitVisible(chromedp.CSS(`#created-token-id`)))
	created := next(t, got, "token.created")
	if !verifies(created, secret) {
		t.Errorf("the token.created delivery does not verify with the secret shown")
	}
	signOut(t, ctx, tokenizer)
	signIn(t, ctx, mgmt)

	// Its delivery, succeeded, in the deliveries list.
	open(t, ctx, "webhooks")
	click(t, ctx, `#webhook-list button[data-action=deliveries]`)
	delivered := func(what, typ string) {
		t.Helper()
		until(t, ctx, what, `[...document.querySelectorAll('#delivery-list tbody tr')].some(r => r.querySelector('.delivery-event').textContent === `+js(typ)+` &&
			r.querySelector('.delivery-status').textContent === 'succeeded' && r.querySelector('.delivery-response-status').textContent === '200' &&
			r.querySelector('.delivery-response')?.textContent.includes(`+js(xss)+`))`)
	}
	delivered("token.created delivered", "token.created")
	if n := text(t, ctx, "#delivery-webhook-name"); n != name {
		t.Errorf("deliveries of %q, want %q", n, name)
	}
	noXSS(t, ctx, "deliveries")

	// Redelivered: the same event (webhook-id) again.
	eval[bool](t, ctx, `(() => { [...document.querySelectorAll('#delivery-list tbody tr')].find(r => r.querySelector('.delivery-event').textContent === 'token.created')
		.querySelector('button[data-action=redeliver]').click(); return true })()`)
	again := next(t, got, "token.created")
	if id := again.header.Get(webhooks.HeaderID); id == "" || id != created.header.Get(webhooks.HeaderID) {
		t.Errorf("redelivery webhook-id %q, want %q", id, created.header.Get(webhooks.HeaderID))
	}
	delivered("token.created delivered again", "token.created")

	// A test event, through the list's button.
	click(t, ctx, `#webhook-list button[data-action=test]`)
	next(t, got, "webhook.test")
	delivered("test event delivered", "webhook.test")
	shot(t, ctx, "webhooks")

	// Rotate the secret (the second click confirms): shown once, and the
	// next delivery verifies with both secrets.
	eval[bool](t, ctx, `(() => { const b = document.querySelector('#webhook-list button[data-action=rotate]'); b.click(); b.click(); return true })()`)
	do(t, ctx, "the new secret", chromedp.WaitVisible(chromedp.CSS(`#new-secret`)))
	rotated := text(t, ctx, "#new-secret")
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Fatalf("rotated secret %q (was %q)", rotated, secret)
	}
	until(t, ctx, "the overlap told", `document.querySelector('.secret').textContent.includes('previous secret signs too')`)
	click(t, ctx, "#dismiss-secret")
	click(t, ctx, `#webhook-list button[data-action=test]`)
	if r := next(t, got, "webhook.test"); !verifies(r, rotated) || !verifies(r, secret) {
		t.Errorf("after the rotation a delivery verifies with the new secret: %v, the old: %v", verifies(r, rotated), verifies(r, secret))
	}

	// Six deliveries, five a page: paged by cursor, newest first.
	for n := 4; n <= 6; n++ {
		click(t, ctx, `#webhook-list button[data-action=test]`)
		next(t, got, "webhook.test")
		until(t, ctx, "deliveries listed", `document.querySelectorAll('#delivery-list tbody tr').length === `+strconv.Itoa(n))
	}
	set(t, ctx, "#delivery-size", "5")
	until(t, ctx, "first page of deliveries", `document.querySelector('#deliveries-info').textContent.startsWith('Page 1') &&
		document.querySelectorAll('#delivery-list tbody tr').length === 5 && document.querySelector('#delivery-list .delivery-event').textContent === 'webhook.test'`)
	click(t, ctx, "#deliveries-next")
	until(t, ctx, "second page of deliveries", `document.querySelector('#deliveries-info').textContent.startsWith('Page 2') &&
		document.querySelectorAll('#delivery-list tbody tr').length === 1 && document.querySelector('#delivery-list .delivery-event').textContent === 'token.created'`)
	click(t, ctx, "#deliveries-prev")
	until(t, ctx, "first page again", `document.querySelector('#deliveries-info').textContent.startsWith('Page 1') && document.querySelectorAll('#delivery-list tbody tr').length === 5`)

	// Disable, enable, edit (PUT).
	click(t, ctx, `#webhook-list button[data-action=toggle]`)
	until(t, ctx, "disabled", `document.querySelector('#webhook-list .webhook-status')?.textContent === 'disabled' &&
		document.querySelector('#webhook-list button[data-action=toggle]').textContent === 'Enable'`)
	click(t, ctx, `#webhook-list button[data-action=toggle]`)
	until(t, ctx, "enabled", `document.querySelector('#webhook-list .webhook-status')?.textContent === 'enabled'`)
	click(t, ctx, `#webhook-list button[data-action=edit]`)
	until(t, ctx, "edit form", `document.querySelector('#webhook-form-title').textContent === `+js("Edit "+name)+` &&
		document.querySelector('#event-token-created').checked && document.querySelector('#webhook-url').value === `+js(recvURL+"/hooks"))
	renamed := "Renamed " + xss
	set(t, ctx, "#webhook-name", renamed)
	click(t, ctx, "#event-all")
	set(t, ctx, "#webhook-notify-email", "ops@example.com")
	click(t, ctx, "#webhook-create")
	until(t, ctx, "edited", `document.querySelector('#webhook-list .webhook-name')?.textContent === `+js(renamed)+` &&
		document.querySelector('#webhook-list .webhook-events').textContent.includes('token.created') &&
		document.querySelector('#webhook-list .webhook-events').textContent.includes('* (every event') &&
		document.querySelector('#webhook-form-title').textContent === 'New webhook'`)
	noXSS(t, ctx, "webhooks edited")

	// 390 px wide, the deliveries shown: nothing wider than the screen
	// but the tables' own scrolling; every input labelled.
	do(t, ctx, "390 px", chromedp.EmulateViewport(390, 800))
	click(t, ctx, `#webhook-list button[data-action=deliveries]`)
	until(t, ctx, "deliveries at 390 px", `document.querySelectorAll('#delivery-list tbody tr').length >= 3`)
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("webhooks at 390 px is %d px wide", w)
	}
	unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea')]
		.filter(e => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id || e.name || e.outerHTML)`)
	if len(unlabelled) > 0 {
		t.Errorf("webhooks: inputs without a label: %q", unlabelled)
	}
	do(t, ctx, "1280 px", chromedp.EmulateViewport(1280, 900))

	// Delete (the second click confirms): gone, its deliveries too.
	eval[bool](t, ctx, `(() => { const b = document.querySelector('#webhook-list button[data-action=delete]'); b.click(); b.click(); return true })()`)
	until(t, ctx, "deleted", `document.querySelector('#webhook-list')?.textContent === 'No webhooks.' && !document.querySelector('#delivery-panel')`)
	noXSS(t, ctx, "the end")
}
