package elements_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/elements"
	"github.com/tokenvault/tokenvault/httpapi"
)

// wait is how long a step may take: generous, for a loaded 2-CPU machine.
const wait = time.Minute

// The card typed in the tests: an Amex (a 4-digit CVC), and a CVC no id
// or time is likely to hold as a whole number.
const (
	cardNumber = "378282246310005"
	cardCVC    = "7391"
)

// tab opens a tab of the shared browser, or skips the test when there is
// none (CI=true makes that a failure). The browser tests run one after
// another: each is a few seconds of a loaded machine's CPU, and a
// second tab at once would only share it.
func tab(t *testing.T) context.Context {
	t.Helper()
	if browser == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s: the elements' browser tests cannot run", noBrowser)
		}
		t.Skipf("%s: the elements' browser tests are skipped (CI=true makes this a failure)", noBrowser)
	}
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// until waits (up to wait) for a JavaScript condition to hold; a failure
// shows what the page recorded.
func until(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(wait))); err != nil {
		t.Fatalf("%s: %v; the page recorded %s", what, err, recorded(ctx))
	}
}

// recorded is what the merchant's page recorded, for a failure's message.
func recorded(ctx context.Context) string {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[string](`JSON.stringify({mountError: window.__mountError, events: window.__events,
		messages: (window.__messages ?? []).slice(-8), focused: document.activeElement?.outerHTML.slice(0, 200)})`))
	if err != nil {
		return err.Error()
	}
	return s
}

// servers is a vault (API at /, elements at /elements/v1/) and merchant
// pages on two other origins: one the public application allows, one
// it does not. The vault is on 127.0.0.1 and the merchants on localhost,
// so the frames are cross-site (and out of process) as in production.
type servers struct {
	v                  *tokenvault.Vault
	vault              string
	merchant, stranger string
	publicKey, readKey tokenvault.Credential
	mgmt               tokenvault.Credential
}

func start(t *testing.T) *servers {
	t.Helper()
	v, mgmt := vault(t)
	mux := http.NewServeMux()
	mux.Handle(elements.Prefix, elements.Handler(v))
	mux.Handle("/", httpapi.New(v, httpapi.Options{}))
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	shop := http.FileServerFS(os.DirFS("testdata/merchant"))
	merchant, stranger := httptest.NewServer(shop), httptest.NewServer(shop)
	t.Cleanup(merchant.Close)
	t.Cleanup(stranger.Close)
	localhost := func(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) }
	s := &servers{v: v, vault: api.URL, merchant: localhost(merchant.URL), stranger: localhost(stranger.URL), mgmt: mgmt}
	s.publicKey = app(t, v, mgmt, tokenvault.Public, []string{"token:create"}, s.merchant).Key
	reader, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s.readKey = reader.Key
	return s
}

// page is the merchant page at base, loading the elements from the vault
// with key, in mode ("" for a script tag, "module").
func (s *servers) page(base, mode string, extra ...string) string {
	q := url.Values{"vault": {s.vault}, "key": {string(s.publicKey)}, "mode": {mode}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return base + "/index.html?" + q.Encode()
}

// typeInto clicks the centre of the merchant's element sel (the frame of
// a field of kind fills it), waits for the field to say it has the
// focus, and types keys there, as a user would.
func typeInto(t *testing.T, ctx context.Context, sel, kind, keys string) {
	t.Helper()
	box := eval[[]float64](t, ctx, `(() => { const r = document.querySelector(`+quote(sel)+` + ' iframe').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`)
	do(t, ctx, "click "+sel, chromedp.MouseClickXY(box[0], box[1]))
	until(t, ctx, kind+" focused", `window.__focus.at(-1) === `+quote(kind))
	do(t, ctx, "type into "+sel, chromedp.KeyEvent(keys))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

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

// checkNoCard fails if held holds the card (leak).
func checkNoCard(t *testing.T, held string) {
	t.Helper()
	if l := leak(held); l != "" {
		t.Error(l)
	}
}

var cvcAlone = regexp.MustCompile(`(^|[^0-9A-Za-z_-])` + cardCVC + `([^0-9A-Za-z_-]|$)|"cvc":`)

// leak says where held holds the card number (with or without its
// spaces) or the CVC as a value of its own (not inside a key or an id,
// which may hold its digits by chance), or "" when it holds neither.
func leak(held string) string {
	for _, n := range []string{cardNumber, "3782 822463 10005", "378282 246310005"} {
		if strings.Contains(held, n) {
			return fmt.Sprintf("the merchant's page holds the card number (%q)", n)
		}
	}
	if loc := cvcAlone.FindStringIndex(held); loc != nil {
		return fmt.Sprintf("the merchant's page holds the CVC: ...%s...", held[max(0, loc[0]-80):min(len(held), loc[1]+80)])
	}
	return ""
}

// TestLeakFinds: the check of the browser tests finds what it looks for.
func TestLeakFinds(t *testing.T) {
	t.Parallel()
	for _, held := range []string{`{"number":"378282246310005"}`, `<input value="3782 822463 10005">`, `{"cvc":"x"}`,
		`{"value":"7391"}`, `7391`, `{"value":{"cvc":7391}}`, `<span>7391</span>`} {
		if leak(held) == "" {
			t.Errorf("leak(%q) finds nothing", held)
		}
	}
	for _, held := range []string{`key_ab7391cd`, `0190f5a2-7391-7b3a`, `<div id="cvc">`, `{"last4":"0005","brand":"amex"}`, `http://localhost:37391/`} {
		if l := leak(held); l != "" {
			t.Errorf("leak(%q) = %q, want nothing", held, l)
		}
	}
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

// frameTab attaches to the frame of the page in ctx whose URL holds
// page (the fields are cross-site, so each is a target of its own).
func frameTab(t *testing.T, ctx context.Context, page string) context.Context {
	t.Helper()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if info.Type == "iframe" && strings.Contains(info.URL, "/elements/v1/"+page+"?") {
			fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
			t.Cleanup(cancel)
			return fctx
		}
	}
	t.Fatalf("no frame of %s among the browser's targets", page)
	return nil
}

// checkAccessible reads each field's input inside its frame: its label,
// autocomplete and input mode, and that it is marked invalid, with the
// error in a live region, when it is.
func checkAccessible(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, tc := range []struct{ page, label, autocomplete, inputmode string }{
		{"card-number.html", "Card number", "cc-number", "numeric"},
		{"card-expiry.html", "Expiration date", "cc-exp", "numeric"},
		{"card-cvc.html", "Security code", "cc-csc", "numeric"},
		{"text.html", "Postal code", "postal-code", "numeric"},
	} {
		fctx := frameTab(t, ctx, tc.page)
		got := eval[[]string](t, fctx, `(() => { const i = document.getElementById('input'), e = document.getElementById('error');
			return [i.getAttribute('aria-label'), document.querySelector('label[for=input]').textContent, i.autocomplete, i.inputMode,
				i.getAttribute('aria-invalid'), i.getAttribute('aria-describedby'), e.getAttribute('role'), e.getAttribute('aria-live'), i.getAttribute('aria-required')] })()`)
		want := []string{tc.label, tc.label, tc.autocomplete, tc.inputmode, "false", "error", "alert", "polite", "true"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: [aria-label, label, autocomplete, inputmode, aria-invalid, aria-describedby, role, aria-live, aria-required] = %q, want %q", tc.page, got, want)
		}
	}
}

// writeScreenshot writes the merchant's form, fields mounted and typed
// into, as docs/elements.png.
func writeScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.Screenshot(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "elements.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
