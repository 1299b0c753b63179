package console_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/console"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/browsertest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// wait is how long a step may take (browsertest.Wait).
const wait = browsertest.Wait

// xss is planted in every field a tenant controls; it sets window.__xss
// if it is ever parsed as HTML.
const xss = `<img src=x onerror="window.__xss=1">`

// testServer serves a new Vault's API at / and the console at /console/
// on one origin, as the server does, with the JavaScript unit tests at
// /jstest/; it returns the URL and the tenant's management key.
func testServer(t *testing.T) (string, string) {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: store, Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true},
		Mailer: mailer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Acme " + xss})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", console.Handler())
	mux.Handle("/jstest/", http.StripPrefix("/jstest/", http.FileServerFS(os.DirFS("testdata/jstest"))))
	mux.Handle("/", httpapi.New(v, httpapi.Options{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, string(boot.Application.Key)
}

// mailer accepts every invitation e-mail and sends nothing.
type mailer struct{}

func (mailer) SendInvitation(context.Context, tokenvault.InvitationMail) error { return nil }

// tab opens a tab of the run's browser (browsertest.Tab).
func tab(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Tab(t, "the console's browser tests")
}

// do runs steps, each within wait.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v; errors shown: %s", what, err, shownErrors(ctx))
	}
}

// shownErrors is the text of the page's error boxes, for a failure's
// message.
func shownErrors(ctx context.Context) string {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Evaluate[string](`[...document.querySelectorAll('.form-error, .field-error')].map(e => e.textContent).filter(Boolean).join(' | ')`))
	if err != nil {
		return err.Error()
	}
	return s
}

// eval evaluates a JavaScript expression (awaiting a promise) into T
// (browsertest.Eval).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, expr)
}

// until waits for a JavaScript condition to hold.
func until(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	do(t, ctx, what, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(wait))(ctx, tg)
		return chromedp.Void{}, err
	})
}

// js quotes s as a JavaScript string.
func js(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// text is the text of the first element sel matches ("" for none).
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector(`+js(sel)+`)?.textContent ?? ""`)
}

// set sets a control's value as typed (input and change events fire).
func set(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	do(t, ctx, "set "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	eval[bool](t, ctx, `(() => { const el = document.querySelector(`+js(sel)+`); el.value = `+js(value)+
		`; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); return true })()`)
}

// click clicks sel once it is visible.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	do(t, ctx, "click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// open goes to a page of the console by its nav link and waits for it.
func open(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	click(t, ctx, `#nav a[href="#/`+page+`"]`)
	do(t, ctx, "open "+page, chromedp.WaitVisible(chromedp.CSS(`#page-`+page+`[data-ready]`)))
}

// noXSS fails the test if a planted payload ran or became an element.
func noXSS(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if ran := eval[bool](t, ctx, `window.__xss !== undefined || document.querySelectorAll('img').length > 0`); ran {
		t.Fatalf("%s: a planted <img onerror> was rendered as HTML", where)
	}
}

// signIn signs in with key on the sign-in page and waits for the overview.
func signIn(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	do(t, ctx, "sign-in page", chromedp.WaitVisible(chromedp.CSS(`#signin-key`)))
	set(t, ctx, "#signin-key", key)
	click(t, ctx, "#signin-submit")
	do(t, ctx, "overview after sign-in", chromedp.WaitVisible(chromedp.CSS(`#page-overview[data-ready]`)))
}

// signOut signs out and checks the key is gone from memory and storage.
func signOut(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	click(t, ctx, "#sign-out")
	signedOut(t, ctx, key)
}

// signedOut waits for the sign-in page and checks the key is gone from
// memory, storage, the URL and the page.
func signedOut(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	do(t, ctx, "sign-in page after sign-out", chromedp.WaitVisible(chromedp.CSS(`#signin-key`)))
	state := eval[[]any](t, ctx, `(async () => { const s = await import('/console/session.js');
		return [s.getKey(), sessionStorage.getItem(s.storageName), localStorage.length, document.cookie, location.href.includes(`+js(key)+`),
			document.documentElement.outerHTML.includes(`+js(key)+`)] })()`)
	want := []any{nil, nil, float64(0), "", false, false}
	if b, w := mustJSON(state), mustJSON(want); b != w {
		t.Fatalf("after sign-out [key in memory, in sessionStorage, localStorage items, cookies, key in URL, key in page] = %s, want %s", b, w)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// shot writes the screenshot of the page shown as docs/console/name.png
// when -screenshots is given.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	c, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// createApp creates an application on the applications page and returns
// its key, read from the box that shows it once.
func createApp(t *testing.T, ctx context.Context, name, typ, rules string, perms ...string) string {
	t.Helper()
	set(t, ctx, "#app-name", name)
	set(t, ctx, "#app-type", typ)
	until(t, ctx, "permissions of "+typ, `document.querySelector('#app-permissions legend')?.textContent.includes(`+js(typ)+`)`)
	for _, p := range perms {
		click(t, ctx, "#perm-"+strings.ReplaceAll(p, ":", "-"))
	}
	rulesJSON(t, ctx, rules)
	eval[bool](t, ctx, `(() => { document.getElementById('key-slot').replaceChildren(); return true })()`)
	click(t, ctx, "#app-create")
	do(t, ctx, "the new key of "+name, chromedp.WaitVisible(chromedp.CSS(`#new-key`)))
	until(t, ctx, name+" listed", `[...document.querySelectorAll('#app-list .app-name')].some(e => e.textContent === `+js(name)+`)`)
	return text(t, ctx, "#new-key")
}

// rulesJSON writes rules as JSON in the applications form: the rules
// editor is switched to its JSON view first. No rules ("" or "[]") is
// what the form holds after a creation, and all a management
// application's form (no rules editor) may hold.
func rulesJSON(t *testing.T, ctx context.Context, rules string) {
	t.Helper()
	if (rules == "" || rules == "[]") && eval[bool](t, ctx, `document.querySelector('#app-rules').value === '' || document.querySelector('#app-rules-editor').hidden`) {
		return
	}
	if eval[bool](t, ctx, `document.querySelector('#rules-json').hidden`) {
		click(t, ctx, "#rules-mode")
	}
	set(t, ctx, "#app-rules", rules)
}
