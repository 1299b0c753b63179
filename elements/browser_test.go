package elements_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/tokenvault/tokenvault"
)

// TestElementsInBrowser: a merchant page on another origin mounts the
// fields with one script tag, a user types a card (moving between the
// fields with Tab), the page tokenizes and gets a token id that a
// private key reads back; nothing the page holds (its DOM, every message
// it received, every event, the answer) holds the card number or the
// CVC. Styles carrying script are refused.
func TestElementsInBrowser(t *testing.T) {
	ctx := tab(t)
	s := start(t)
	do(t, ctx, "load the merchant page", chromedp.Navigate(s.page(s.merchant, "")))
	until(t, ctx, "fields mounted", `window.__mounted === true || window.__mountError !== undefined`)
	if e := eval[any](t, ctx, `window.__mountError ?? null`); e != nil {
		t.Fatalf("mount: %v", e)
	}
	if n := eval[float64](t, ctx, `document.querySelectorAll('iframe').length`); n != 4 {
		t.Fatalf("%v frames on the page, want 4 fields (the controller comes with the first tokenize)", n)
	}

	// The number, then Tab to the expiry and the CVC: the keyboard moves
	// between the frames as between inputs.
	typeInto(t, ctx, "#number", "card-number", cardNumber[:6])
	until(t, ctx, "brand detected while typing", `window.__events.some(e => e.kind === 'card-number' && e.brand === 'amex' && !e.complete)`)
	do(t, ctx, "type the rest of the number", chromedp.KeyEvent(cardNumber[6:]))
	until(t, ctx, "number complete", `window.__events.filter(e => e.kind === 'card-number').at(-1)?.complete === true`)
	do(t, ctx, "tab to the expiry", chromedp.KeyEvent(kb.Tab))
	until(t, ctx, "expiry focused", `window.__focus.at(-1) === 'card-expiry'`)
	do(t, ctx, "type the expiry", chromedp.KeyEvent("1234"))
	until(t, ctx, "expiry complete", `window.__events.filter(e => e.kind === 'card-expiry').at(-1)?.complete === true`)
	do(t, ctx, "tab to the cvc", chromedp.KeyEvent(kb.Tab))
	until(t, ctx, "cvc focused", `window.__focus.at(-1) === 'card-cvc'`)
	do(t, ctx, "type the cvc", chromedp.KeyEvent(cardCVC))
	typeInto(t, ctx, "#postal", "text", "75011")
	until(t, ctx, "every field complete", `['card-number', 'card-expiry', 'card-cvc', 'text'].every(k => window.__events.filter(e => e.kind === k).at(-1)?.complete === true)`)
	last := eval[map[string]any](t, ctx, `window.__events.filter(e => e.kind === 'card-number').at(-1)`)
	if last["brand"] != "amex" || last["last4"] != "0005" || last["error"] != nil {
		t.Errorf("the number's last change event = %v, want brand amex, last4 0005, no error", last)
	}
	if *screenshot {
		writeScreenshot(t, ctx)
	}
	checkAccessible(t, ctx)

	// Styles that could carry script are refused, each with a TypeError.
	for i, got := range eval[[]string](t, ctx, `window.__styleRefused()`) {
		if got != "TypeError" {
			t.Errorf("a script-bearing style option (case %d) was %s, want a TypeError", i, got)
		}
	}

	// A request may not compute over the data: refused by the script,
	// and by the controller frame when the page goes round the script.
	if got := eval[string](t, ctx, `window.__elements.tokenize({type: 'card', id: '{{ data.number }}'}).then(() => 'accepted', (e) => e.name)`); got != "TypeError" {
		t.Errorf("tokenize with an id expression: %s, want a TypeError", got)
	}
	got := eval[map[string]any](t, ctx, `new Promise((resolve) => {
		const el = window.__elements;
		el._ensureController().then(() => {
			el._pending.set('raw', {resolve: (r) => resolve({ok: true, r}), reject: (e) => resolve({ok: false, message: e.message})});
			el._post(el._controller.iframe, {type: 'tokenize', id: 'raw', request: {type: 'card', mask: '{{ data.cvc }}'}, fields: [{kind: 'card-number'}]});
		});
	})`)
	if got["ok"] != false || !strings.Contains(got["message"].(string), "mask is not taken") {
		t.Errorf("the controller frame sent a mask expression: %v, want it refused", got)
	}

	res := eval[map[string]any](t, ctx, `window.__pay()`)
	if res["ok"] != true {
		t.Fatalf("tokenize: %v", res)
	}
	result := res["result"].(map[string]any)
	if result["type"] != "card" || result["brand"] != "amex" || result["last4"] != "0005" || len(result) != 4 {
		t.Errorf("tokenize answered %v, want {id, type: card, brand: amex, last4: 0005}", result)
	}
	tok, err := s.v.GetToken(context.Background(), s.readKey, result["id"].(string))
	if err != nil {
		t.Fatalf("the private key reads the token: %v", err)
	}
	data, _ := json.Marshal(tok.Data)
	if !strings.Contains(string(data), `"number":"`+cardNumber+`"`) || !strings.Contains(string(data), `"expiration_month":12,"expiration_year":2034`) {
		t.Errorf("the token holds %s, want the typed card", data)
	}

	// A token intent, from the same fields.
	res = eval[map[string]any](t, ctx, `window.__pay(true)`)
	if res["ok"] != true {
		t.Fatalf("createTokenIntent: %v", res)
	}
	intent := res["result"].(map[string]any)
	if card, _ := intent["card"].(map[string]any); card["last4"] != "0005" || card["brand"] != "amex" || intent["id"] == "" {
		t.Errorf("createTokenIntent answered %v", intent)
	}

	// Nothing the merchant's page holds has the number or the CVC.
	held := eval[string](t, ctx, `document.documentElement.outerHTML + JSON.stringify(window.__messages) + JSON.stringify(window.__events) +
		JSON.stringify(window.__result ?? null) + JSON.stringify(window.__failure ?? null)`)
	if n := eval[float64](t, ctx, `window.__messages.length`); n < 10 {
		t.Fatalf("the page recorded %v messages: the recorder does not work", n)
	}
	checkNoCard(t, held)
}

// TestElementsAsModule: the module form mounts the fields and tokenizes
// from another origin too.
func TestElementsAsModule(t *testing.T) {
	ctx := tab(t)
	s := start(t)
	do(t, ctx, "load the merchant page (module)", chromedp.Navigate(s.page(s.merchant, "module")))
	until(t, ctx, "fields mounted", `window.__mounted === true || window.__mountError !== undefined`)
	if e := eval[any](t, ctx, `window.__mountError ?? null`); e != nil {
		t.Fatalf("mount: %v", e)
	}
	if g := eval[bool](t, ctx, `'TokenVaultElements' in window`); !g {
		t.Error("the module did not load elements.js")
	}
	// A number failing the Luhn check is invalid once the user leaves
	// it: the page is told, and so is a screen reader (aria-invalid, the
	// error in a live region).
	typeInto(t, ctx, "#number", "card-number", "4242424242424241")
	typeInto(t, ctx, "#expiry", "card-expiry", "1234")
	until(t, ctx, "invalid number reported", `window.__events.filter(e => e.kind === 'card-number').at(-1)?.error === 'Your card number is invalid.'`)
	fctx := frameTab(t, ctx, "card-number.html")
	if got := eval[[]string](t, fctx, `[document.getElementById('input').getAttribute('aria-invalid'), document.getElementById('error').textContent]`); got[0] != "true" || got[1] != "Your card number is invalid." {
		t.Errorf("an invalid number's frame: aria-invalid %q, error %q", got[0], got[1])
	}
	if r := eval[map[string]any](t, ctx, `window.__pay()`); r["ok"] != false || r["code"] != "invalid" {
		t.Errorf("tokenize with an invalid number: %v, want code invalid", r)
	} else if f, _ := r["fields"].([]any); len(f) != 2 { // the number, and the empty cvc
		t.Errorf("tokenize with an invalid number and no cvc: fields %v", r["fields"])
	}
	eval[bool](t, ctx, `(window.__fields[0].clear(), true)`)
	until(t, ctx, "number cleared", `window.__events.filter(e => e.kind === 'card-number').at(-1)?.empty === true`)
	typeInto(t, ctx, "#number", "card-number", cardNumber)
	typeInto(t, ctx, "#cvc", "card-cvc", cardCVC)
	until(t, ctx, "card complete", `['card-number', 'card-expiry', 'card-cvc'].every(k => window.__events.filter(e => e.kind === k).at(-1)?.complete === true)`)
	res := eval[map[string]any](t, ctx, `window.__pay()`)
	if res["ok"] != true {
		t.Fatalf("tokenize: %v", res)
	}
	if _, err := s.v.GetToken(context.Background(), s.readKey, res["result"].(map[string]any)["id"].(string)); err != nil {
		t.Fatalf("the private key reads the token: %v", err)
	}
	checkNoCard(t, eval[string](t, ctx, `document.documentElement.outerHTML + JSON.stringify(window.__messages) + JSON.stringify(window.__events)`))
}

// TestElementsWithSession: with a session key, the fields tokenize with
// it, not with the public key: refused (403) until a private key
// authorizes the session, then accepted.
func TestElementsWithSession(t *testing.T) {
	ctx := tab(t)
	s := start(t)
	bg := context.Background()
	sess, err := s.v.CreateSession(bg, s.publicKey)
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "load the merchant page with a session", chromedp.Navigate(s.page(s.merchant, "", "session", string(sess.SessionKey))))
	until(t, ctx, "fields mounted", `window.__mounted === true || window.__mountError !== undefined`)
	typeInto(t, ctx, "#number", "card-number", cardNumber)
	typeInto(t, ctx, "#expiry", "card-expiry", "1234")
	typeInto(t, ctx, "#cvc", "card-cvc", cardCVC)
	until(t, ctx, "card complete", `['card-number', 'card-expiry', 'card-cvc'].every(k => window.__events.filter(e => e.kind === k).at(-1)?.complete === true)`)
	if r := eval[map[string]any](t, ctx, `window.__pay()`); r["ok"] != false || r["code"] != "api_error" || r["status"] != float64(403) {
		t.Fatalf("tokenize with a session not yet authorized: %v, want an api_error of status 403", r)
	}
	authorizer, err := s.v.CreateApplication(bg, s.mgmt, tokenvault.CreateApplicationRequest{Name: "authorizer", Type: tokenvault.Private,
		Permissions: []string{"token:create"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.v.AuthorizeSession(bg, authorizer.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce, Permissions: []string{"token:create"}}); err != nil {
		t.Fatal(err)
	}
	r := eval[map[string]any](t, ctx, `window.__pay()`)
	if r["ok"] != true {
		t.Fatalf("tokenize with the authorized session: %v", r)
	}
	if _, err := s.v.GetToken(bg, s.readKey, r["result"].(map[string]any)["id"].(string)); err != nil {
		t.Fatalf("the private key reads the token: %v", err)
	}
	checkNoCard(t, eval[string](t, ctx, `document.documentElement.outerHTML + JSON.stringify(window.__messages) + JSON.stringify(window.__events)`))
}

// TestElementsRefusedOrigin: a page on an origin the application does not
// list cannot embed the fields: the browser refuses the frames, and the
// page's mount rejects with frame_blocked.
func TestElementsRefusedOrigin(t *testing.T) {
	ctx := tab(t)
	s := start(t)
	do(t, ctx, "load the stranger's page", chromedp.Navigate(s.page(s.stranger, "", "timeout", "3000")))
	until(t, ctx, "mount settled", `window.__mounted === true || window.__mountError !== undefined`)
	if e := eval[string](t, ctx, `String(window.__mountError ?? 'mounted')`); !strings.HasPrefix(e, "frame_blocked: ") || !strings.Contains(e, "allowed_origins") {
		t.Fatalf("mount on a refused origin: %q, want frame_blocked naming allowed_origins", e)
	}
	// No field said a word: no message came from the vault's frames.
	if n := eval[float64](t, ctx, `window.__messages.filter(m => m.origin === `+quote(s.vault)+`).length`); n != 0 {
		t.Errorf("%v messages from the vault's origin reached a refused page", n)
	}
}
