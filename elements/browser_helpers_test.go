package elements_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/elements"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/browsertest"
)

// wait is how long a step may take (browsertest.Wait).
const wait = browsertest.Wait

// The card typed in the tests: an Amex (a 4-digit CVC), and a CVC no id
// or time is likely to hold as a whole number.
const (
	cardNumber = "378282246310005"
	cardCVC    = "7391"
)

// tab opens a tab of the run's browser (browsertest.Tab). The browser
// tests run one after another: each is a few seconds of a loaded
// machine's CPU, and a second tab at once would only share it.
func tab(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Tab(t, "the elements' browser tests")
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into T
// (browsertest.Eval).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, expr)
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
	mux.Handle(elements.Prefix, elements.Handler(v, elements.Options{}))
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
