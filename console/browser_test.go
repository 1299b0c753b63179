package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsole walks the console in a real browser as a user would: sign
// in, applications, tokens (masked with one key, revealed with another),
// the audit log paged by cursor, reactors, proxies, members, with the XSS
// payload planted in every field a tenant controls, and sign-out.
func TestConsole(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	shot(t, ctx, "signin")

	// A wrong key is refused, saying so beside the field.
	set(t, ctx, "#signin-key", "not-a-key")
	click(t, ctx, "#signin-submit")
	until(t, ctx, "refusal of a wrong key", `document.querySelector('#signin-form .form-error')?.textContent.includes('not accepted')`)
	signIn(t, ctx, mgmt)
	until(t, ctx, "tenant name", `document.querySelector('#page-overview h1')?.textContent === `+js("Overview of Acme "+xss))
	noXSS(t, ctx, "overview")

	// Applications: a field error shows beside its field; then two
	// applications, one masking and one revealing.
	open(t, ctx, "applications")
	rulesJSON(t, ctx, `[{"priority": 0, "container": "/", "transform": "mask", "permissions": ["token:read"]}]`)
	click(t, ctx, "#app-create")
	until(t, ctx, "field errors beside the fields", `document.querySelector('#app-form [data-error-for=name]').textContent !== '' &&
		document.querySelector('#app-form .form-error').textContent !== ''`)
	rule := func(transform string) string {
		return `[{"priority": 1, "container": "/", "transform": "` + transform + `", "permissions": ["token:create", "token:read", "token:search", "token:use", "token:delete"]}]`
	}
	maskKey := createApp(t, ctx, xss, "private", rule("mask"))
	revealKey := createApp(t, ctx, "revealer", "private", rule("reveal"))
	if maskKey == "" || revealKey == "" || maskKey == revealKey {
		t.Fatalf("keys shown: %q, %q", maskKey, revealKey)
	}
	createApp(t, ctx, "dashboard", "public", "", "token:create")
	shot(t, ctx, "applications")
	noXSS(t, ctx, "applications")
	// Regenerate the dashboard's key (two clicks: the second confirms).
	eval[bool](t, ctx, `(() => { document.getElementById('key-slot').replaceChildren(); const row = [...document.querySelectorAll('#app-list tr')].find(r => r.querySelector('.app-name')?.textContent === 'dashboard');
		const b = row.querySelector('button[data-action=regenerate]'); b.click(); b.click(); return true })()`)
	do(t, ctx, "regenerated key", chromedp.WaitVisible(chromedp.CSS(`#new-key`)))
	// Edit the dashboard: rename it, add a permission.
	eval[bool](t, ctx, `(() => { const row = [...document.querySelectorAll('#app-list tr')].find(r => r.querySelector('.app-name')?.textContent === 'dashboard');
		row.querySelector('button[data-action=edit]').click(); return true })()`)
	until(t, ctx, "edit form", `document.querySelector('#app-form-title').textContent === 'Edit dashboard' && document.querySelector('#perm-token-create')?.checked === true`)
	set(t, ctx, "#app-name", "dashboard "+xss)
	click(t, ctx, "#perm-token-intent-create")
	// A public application's allowed origins (for the hosted elements),
	// normalized by the API.
	set(t, ctx, "#app-origins", "https://Shop.Example:443\nhttp://localhost:8081\n")
	click(t, ctx, "#app-create")
	until(t, ctx, "edited application listed", `[...document.querySelectorAll('#app-list tr')].some(r => r.querySelector('.app-name')?.textContent === `+js("dashboard "+xss)+` &&
		r.textContent.includes('token:create') && r.textContent.includes('token-intent:create') &&
		r.querySelector('.app-origins')?.textContent === 'https://shop.example http://localhost:8081') && document.querySelector('#app-form-title').textContent === 'New application'`)
	if shown := eval[bool](t, ctx, `!document.getElementById('app-origins').closest('.field').hidden`); shown {
		t.Error("the allowed origins field is shown for a private application (the form's default type)")
	}
	// Create one more and delete it.
	createApp(t, ctx, "short-lived", "private", "", "token:read")
	eval[bool](t, ctx, `(() => { const row = [...document.querySelectorAll('#app-list tr')].find(r => r.querySelector('.app-name')?.textContent === 'short-lived');
		const b = row.querySelector('button[data-action=delete]'); b.click(); b.click(); return true })()`)
	until(t, ctx, "deleted application gone", `document.querySelectorAll('#app-list .app-name').length === 4 &&
		![...document.querySelectorAll('#app-list .app-name')].some(e => e.textContent === 'short-lived')`)

	// Tokens: create a card with the revealing key... as management
	// (which holds token permissions), with metadata planted.
	signOut(t, ctx, mgmt)
	signIn(t, ctx, revealKey)
	open(t, ctx, "tokens")
	set(t, ctx, "#new-token-type", "card")
	set(t, ctx, "#card-number", "4242 4242 4242 4242")
	set(t, ctx, "#card-month", "12")
	set(t, ctx, "#card-year", "2031")
	set(t, ctx, "#new-token-metadata", "customer=c42\nnote="+xss)
	click(t, ctx, "#token-create")
	do(t, ctx, "created token", chromedp.WaitVisible(chromedp.CSS(`#created-token-id`)))
	tokenID := text(t, ctx, "#created-token-id")
	// A card number that is not one: the problem's detail, and its field
	// error beside the number.
	set(t, ctx, "#card-number", "123")
	click(t, ctx, "#token-create")
	until(t, ctx, "error of a bad card number", `document.querySelector('#token-create-form .form-error').textContent !== '' &&
		document.querySelector('#card-fields [data-error-for=data]').textContent.includes('data.number')`)

	// Find it by search, revealed.
	set(t, ctx, "#token-query", "metadata.customer:c42")
	click(t, ctx, "#token-search")
	until(t, ctx, "search result", `document.querySelector('#token-results')?.textContent.includes(`+js(tokenID)+`)`)
	if got := text(t, ctx, "#token-results .token-metadata"); !strings.Contains(got, `"note":`+js(xss)) {
		t.Errorf("metadata shown as %q, want the payload as text", got)
	}
	if got := text(t, ctx, "#token-results .token-data"); !strings.Contains(got, "4242424242424242") {
		t.Errorf("the revealing key sees data %q, want the number", got)
	}
	shot(t, ctx, "tokens")
	noXSS(t, ctx, "tokens")
	// List by container (a card's default is /pci/high/, at or below
	// /pci/). The search's results are cleared first: the listing must
	// show the token itself, not leave the search's rows standing (with
	// "/pci", which the API refuses, they did, and this passed).
	set(t, ctx, "#token-query", "")
	set(t, ctx, "#token-container", "/pci/")
	eval[bool](t, ctx, `(() => { document.querySelector('#token-results').textContent = ''; document.querySelector('#tokens-info').textContent = ''; return true })()`)
	click(t, ctx, "#token-search")
	until(t, ctx, "listed by container", `document.querySelector('#tokens-info').textContent.startsWith('Page 1') &&
		document.querySelector('#token-results')?.textContent.includes(`+js(tokenID)+`)`)
	// A plain token, viewed and deleted.
	set(t, ctx, "#new-token-type", "token")
	set(t, ctx, "#new-token-data", "078-05-1120")
	click(t, ctx, "#token-create")
	until(t, ctx, "plain token", `document.querySelector('#created-token-id') && document.querySelector('#created-token-id').textContent !== `+js(tokenID))
	plainID := text(t, ctx, "#created-token-id")
	set(t, ctx, "#token-id", plainID)
	click(t, ctx, "#token-show")
	until(t, ctx, "plain token view", `document.querySelector('#token-view .token-data')?.textContent === '078-05-1120'`)
	click(t, ctx, "#token-delete")
	click(t, ctx, "#token-delete")
	do(t, ctx, "token deleted", chromedp.WaitVisible(chromedp.CSS(`#token-deleted`)))
	click(t, ctx, "#token-show")
	until(t, ctx, "deleted token not found", `document.querySelector('#token-view-form .form-error').textContent !== ''`)
	signOut(t, ctx, revealKey)

	// The masking key sees it masked.
	signIn(t, ctx, maskKey)
	open(t, ctx, "tokens")
	set(t, ctx, "#token-id", tokenID)
	click(t, ctx, "#token-show")
	do(t, ctx, "token view", chromedp.WaitVisible(chromedp.CSS(`#token-json`)))
	masked := text(t, ctx, "#token-view .token-data")
	if strings.Contains(masked, "4242424242424242") || !strings.Contains(masked, "4242") {
		t.Errorf("the masking key sees data %q, want it masked", masked)
	}
	noXSS(t, ctx, "token view")
	signOut(t, ctx, maskKey)

	// Reactors, as management: a formula, a reactor of its own code with
	// the payload in name and code, one whose error carries it.
	signIn(t, ctx, mgmt)
	open(t, ctx, "reactors")
	set(t, ctx, "#formula-name", "Greeter "+xss)
	click(t, ctx, "#formula-create")
	until(t, ctx, "formula listed", `[...document.querySelectorAll('#formula-list .formula-name')].some(e => e.textContent === `+js("Greeter "+xss)+`)`)
	if got := eval[string](t, ctx, `document.querySelector('#formula-form .gutter').textContent`); got != "1\n2\n3\n4" {
		t.Errorf("line numbers of the example code = %q", got)
	}
	set(t, ctx, "#reactor-formula", "")
	set(t, ctx, "#reactor-name", "Echo "+xss)
	set(t, ctx, "#reactor-code", "// "+xss+"\nmodule.exports = async (req) => ({raw: {echo: req.args.name, note: "+js(xss)+"}, tokenize: {t: req.args.name}});\n")
	click(t, ctx, "#reactor-create")
	until(t, ctx, "reactor listed", `[...document.querySelectorAll('#reactor-list .reactor-name')].some(e => e.textContent === `+js("Echo "+xss)+`)`)
	set(t, ctx, "#reactor-name", "Failing")
	set(t, ctx, "#reactor-code", "module.exports = async () => { throw new Error("+js(xss)+"); };\n")
	click(t, ctx, "#reactor-create")
	until(t, ctx, "second reactor listed", `document.querySelectorAll('#reactor-list .reactor-name').length === 2`)
	// Edit the failing one's configuration and name.
	click(t, ctx, `#reactor-list button[aria-label="Edit reactor Failing"]`)
	until(t, ctx, "reactor edit form", `document.querySelector('#reactor-form-title').textContent === 'Edit Failing' &&
		document.querySelector('#reactor-form .gutter').textContent === '1\n2'`)
	set(t, ctx, "#reactor-configuration", `{"mode": "strict"}`)
	click(t, ctx, "#reactor-create")
	until(t, ctx, "reactor edited", `[...document.querySelectorAll('#reactor-list tr')].some(r => r.querySelector('.reactor-name')?.textContent === 'Failing' &&
		r.textContent.includes('{"mode":"strict"}')) && document.querySelector('#reactor-form-title').textContent === 'New reactor'`)
	shot(t, ctx, "reactors")
	echoID := eval[string](t, ctx, `[...document.querySelectorAll('#invoke-reactor option')].find(o => o.textContent.startsWith('Echo')).value`)
	failingID := eval[string](t, ctx, `[...document.querySelectorAll('#invoke-reactor option')].find(o => o.textContent === 'Failing').value`)
	noXSS(t, ctx, "reactors")

	// Proxies: one to a destination that echoes, and a test call.
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "got": json.RawMessage(body)})
	}))
	t.Cleanup(dest.Close)
	open(t, ctx, "proxies")
	set(t, ctx, "#proxy-name", "Echo "+xss)
	set(t, ctx, "#proxy-destination", dest.URL)
	set(t, ctx, "#proxy-request-transform", "module.exports = async (req) => ({body: {wrapped: req.args.body}});\n")
	click(t, ctx, "#proxy-require-auth")
	click(t, ctx, "#proxy-create")
	until(t, ctx, "proxy listed", `[...document.querySelectorAll('#proxy-list .proxy-name')].some(e => e.textContent === `+js("Echo "+xss)+`)`)
	set(t, ctx, "#call-path", "/charges")
	set(t, ctx, "#call-body", `{"amount": 5}`)
	click(t, ctx, "#call")
	do(t, ctx, "proxy answer", chromedp.WaitVisible(chromedp.CSS(`#call-response`)))
	if st, resp := text(t, ctx, "#call-status"), text(t, ctx, "#call-response"); st != "200" || !strings.Contains(resp, `"wrapped"`) || !strings.Contains(resp, `"/charges"`) {
		t.Errorf("proxy test call: %s %s", st, resp)
	}
	shot(t, ctx, "proxies")
	// A transform that throws: the proxy_error's detail, as text.
	set(t, ctx, "#proxy-name", "Broken")
	set(t, ctx, "#proxy-request-transform", "module.exports = async () => { throw new Error("+js(xss)+"); };\n")
	click(t, ctx, "#proxy-create")
	until(t, ctx, "second proxy listed", `document.querySelectorAll('#proxy-list .proxy-name').length === 2`)
	// Edit it: its destination gets a path.
	click(t, ctx, `#proxy-list button[aria-label="Edit proxy Broken"]`)
	until(t, ctx, "proxy edit form", `document.querySelector('#proxy-form-title').textContent === 'Edit Broken' &&
		document.querySelector('#proxy-request-transform').value.includes('throw new Error')`)
	set(t, ctx, "#proxy-destination", dest.URL+"/v2")
	click(t, ctx, "#proxy-create")
	until(t, ctx, "proxy edited", `[...document.querySelectorAll('#proxy-list tr')].some(r => r.querySelector('.proxy-name')?.textContent === 'Broken' &&
		r.textContent.includes(`+js(dest.URL+"/v2")+`)) && document.querySelector('#proxy-form-title').textContent === 'New proxy'`)
	set(t, ctx, "#call-proxy", eval[string](t, ctx, `[...document.querySelectorAll('#call-proxy option')].find(o => o.textContent === 'Broken').value`))
	click(t, ctx, "#call")
	until(t, ctx, "the proxy_error", `document.querySelector('#call-form .form-error')?.textContent.includes('proxy_error') &&
		document.querySelector('#call-form .form-error').textContent.includes(`+js(xss)+`) && document.querySelector('#call-status')?.textContent >= '400'`)
	noXSS(t, ctx, "proxies")

	// Members and invitations.
	open(t, ctx, "members")
	set(t, ctx, "#invite-email", "ops@example.com")
	click(t, ctx, "#invite")
	until(t, ctx, "invitation listed", `[...document.querySelectorAll('#invitation-list .invitation-email')].some(e => e.textContent === 'ops@example.com')`)
	set(t, ctx, "#invite-email", "not an address")
	click(t, ctx, "#invite")
	until(t, ctx, "invalid address refused beside the field", `document.querySelector('#invite-form .form-error').textContent !== ''`)
	// Resend it, then delete it (the second click confirms).
	expires := text(t, ctx, "#invitation-list tbody tr td:nth-child(3)")
	click(t, ctx, `#invitation-list button[aria-label="Resend the invitation to ops@example.com"]`)
	until(t, ctx, "resent", `document.querySelector('#invitation-list tbody tr td:nth-child(3)')?.textContent !== `+js(expires))
	click(t, ctx, `#invitation-list button[aria-label="Delete the invitation to ops@example.com"]`)
	click(t, ctx, `#invitation-list button[aria-label="Delete the invitation to ops@example.com"]`)
	until(t, ctx, "invitation deleted", `document.querySelector('#invitation-list')?.textContent === 'No invitations.'`)
	until(t, ctx, "the owner listed", `document.querySelectorAll('#member-list tbody tr').length === 1`)

	// The audit log, five lines a page, paged by cursor forward and back.
	open(t, ctx, "logs")
	set(t, ctx, "#log-size", "5")
	click(t, ctx, "#log-filter")
	until(t, ctx, "first page", `document.querySelector('#logs-info').textContent.startsWith('Page 1') && document.querySelectorAll('#log-list tbody tr').length === 5`)
	first := text(t, ctx, "#log-list tbody")
	click(t, ctx, "#logs-next")
	until(t, ctx, "second page", `document.querySelector('#logs-info').textContent.startsWith('Page 2')`)
	if second := text(t, ctx, "#log-list tbody"); second == first || second == "" {
		t.Errorf("the second page of the log shows the first again")
	}
	click(t, ctx, "#logs-prev")
	until(t, ctx, "back to the first page", `document.querySelector('#logs-info').textContent.startsWith('Page 1') && document.querySelector('#log-list tbody').textContent === `+js(first))
	// Filter by entity: the application's lines only.
	set(t, ctx, "#log-entity-type", "application")
	click(t, ctx, "#log-filter")
	until(t, ctx, "filtered", `document.querySelector('#logs-info').textContent.startsWith('Page 1') &&
		[...document.querySelectorAll('#log-list tbody tr')].every(r => r.children[1].textContent.startsWith('application '))`)
	// Export the page: the JSON lines offered are the rows shown.
	exported := eval[string](t, ctx, `(async () => {
		const real = URL.createObjectURL; let blob;
		URL.createObjectURL = (b) => { blob = b; return real.call(URL, b); };
		try { document.getElementById('log-export').click(); } finally { URL.createObjectURL = real; }
		return await blob.text(); })()`)
	lines := strings.Split(strings.TrimSuffix(exported, "\n"), "\n")
	if rows := eval[int](t, ctx, `document.querySelectorAll('#log-list tbody tr').length`); len(lines) != rows || rows == 0 {
		t.Errorf("export holds %d lines for %d rows", len(lines), rows)
	}
	for _, l := range lines {
		var entry struct {
			EntityType string `json:"entity_type"`
		}
		if err := json.Unmarshal([]byte(l), &entry); err != nil || entry.EntityType != "application" {
			t.Errorf("exported line %q: %v", l, err)
		}
	}
	// One entity's lines: the revealer application's (created, read
	// by key at sign-in...), then none after a date in the future.
	appID := eval[string](t, ctx, `(async () => (await (await fetch('/applications', {headers: {'SVC-API-KEY': `+js(mgmt)+`}})).json()).data.find(a => a.name === 'revealer').id)()`)
	set(t, ctx, "#log-entity-id", appID)
	click(t, ctx, "#log-filter")
	until(t, ctx, "one entity's lines", `document.querySelectorAll('#log-list tbody tr').length > 0 &&
		[...document.querySelectorAll('#log-list tbody tr')].every(r => r.children[1].textContent === 'application '+`+js(appID)+`)`)
	set(t, ctx, "#log-start", "2099-01-01T00:00")
	click(t, ctx, "#log-filter")
	until(t, ctx, "no lines after 2099", `document.querySelector('#log-list')?.textContent === 'No log lines match.'`)
	set(t, ctx, "#log-start", "")
	set(t, ctx, "#log-entity-id", "")
	set(t, ctx, "#log-entity-type", "")
	click(t, ctx, "#log-filter")
	until(t, ctx, "unfiltered", `document.querySelector('#logs-info').textContent.startsWith('Page 1') &&
		[...document.querySelectorAll('#log-list tbody tr')].some(r => !r.children[1].textContent.startsWith('application '))`)

	// The overview's figures, then 390 px wide: nothing wider than the
	// screen but the tables' own scrolling.
	open(t, ctx, "overview")
	until(t, ctx, "figures", `[...document.querySelectorAll('#figures .n')].every(n => n.textContent !== '…')`)
	if n := text(t, ctx, `#figures [data-figure="/applications"] .n`); n != "4" {
		t.Errorf("applications figure = %q, want 4", n)
	}
	shot(t, ctx, "overview")
	do(t, ctx, "390 px", chromedp.EmulateViewport(390, 800))
	for _, page := range []string{"overview", "applications", "tokens", "logs", "reactors", "proxies", "members", "webhooks"} {
		open(t, ctx, page)
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s at 390 px is %d px wide", page, w)
		}
		unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea')]
			.filter(e => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id || e.name || e.outerHTML)`)
		if len(unlabelled) > 0 {
			t.Errorf("%s: inputs without a label: %q", page, unlabelled)
		}
		// Keyboard focus is visible: Tab from the top reaches the skip
		// link, then the navigation, each with an outline.
		eval[bool](t, ctx, `(() => { document.activeElement?.blur(); window.scrollTo(0, 0); return true })()`)
		for i := range 3 {
			do(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
			focus := eval[string](t, ctx, `(() => { const e = document.activeElement; const s = getComputedStyle(e); return e.tagName + ' ' + (e.textContent || '').trim() + ': ' + s.outlineStyle + ' ' + s.outlineWidth })()`)
			if strings.Contains(focus, ": none") || strings.HasSuffix(focus, " 0px") || strings.HasPrefix(focus, "BODY") {
				t.Errorf("%s: Tab %d focuses %q: no visible focus", page, i+1, focus)
			}
		}
	}
	do(t, ctx, "1280 px", chromedp.EmulateViewport(1280, 900))
	noXSS(t, ctx, "the end")
	signOut(t, ctx, mgmt)

	// Invoke the reactors with the key that may use tokens (token:use,
	// which only a private application holds): raw and tokens, then the
	// error the failing one raised, its payload as text.
	signIn(t, ctx, revealKey)
	open(t, ctx, "reactors")
	set(t, ctx, "#invoke-reactor-id", echoID)
	set(t, ctx, "#invoke-args", `{"name": `+js(xss)+`}`)
	click(t, ctx, "#invoke")
	do(t, ctx, "invocation result", chromedp.WaitVisible(chromedp.CSS(`#invoke-raw`)))
	if raw := text(t, ctx, "#invoke-raw"); !strings.Contains(raw, `"echo": `+js(xss)) {
		t.Errorf("raw = %q", raw)
	}
	if toks := text(t, ctx, "#invoke-tokens"); !strings.Contains(toks, `"t"`) {
		t.Errorf("tokens = %q", toks)
	}
	shot(t, ctx, "reactor-invoke")
	set(t, ctx, "#invoke-reactor-id", failingID)
	click(t, ctx, "#invoke")
	until(t, ctx, "the reactor's error", `document.querySelector('#invoke-form .form-error')?.textContent.includes(`+js(xss)+`)`)
	noXSS(t, ctx, "reactor invocation")

	// The key regenerated elsewhere: the next call gets 401 and the
	// console signs out, saying why.
	eval[bool](t, ctx, `(async () => {
		const h = {'SVC-API-KEY': `+js(mgmt)+`};
		const apps = await (await fetch('/applications', {headers: h})).json();
		const id = apps.data.find(a => a.name === 'revealer').id;
		return (await fetch('/applications/' + id + '/regenerate', {method: 'POST', headers: h})).ok })()`)
	open(t, ctx, "tokens")
	set(t, ctx, "#token-query", "type:card")
	click(t, ctx, "#token-search")
	until(t, ctx, "signed out on 401", `document.querySelector('#signin-form .form-error')?.textContent.includes('no longer accepted')`)
	signedOut(t, ctx, revealKey)
}
