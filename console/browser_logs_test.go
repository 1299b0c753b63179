package console_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleAuditLog reads the audit log as an operations team would:
// actors by their application's name, local times (UTC in the title), a
// denied request marked and found by outcome, one application's lines by
// the actor filter, a filtered view opened from its link, a token's
// accesses from its line, and a planted <img onerror> in an application's
// name (so in log messages) shown as text.
func TestConsoleAuditLog(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	signIn(t, ctx, mgmt)
	open(t, ctx, "applications")
	shopName := "shop " + xss
	shopKey := createApp(t, ctx, shopName, "private",
		`[{"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:create", "token:read"]}]`)
	createApp(t, ctx, "other", "private", `[{"priority": 1, "container": "/", "transform": "mask", "permissions": ["token:read"]}]`)
	// With the shop's key: a token created and read, then a refused call
	// (the key lacks application:read): a denied line.
	got := eval[[]any](t, ctx, `(async () => {
		const k = {'SVC-API-KEY': `+js(shopKey)+`, 'Content-Type': 'application/json'};
		const tok = await (await fetch('/tokens', {method: 'POST', headers: k, body: JSON.stringify({type: 'token', data: 'secret'})})).json();
		const read = await fetch('/tokens/' + tok.id, {headers: k});
		const refused = await fetch('/applications', {headers: k});
		const m = {'SVC-API-KEY': `+js(mgmt)+`};
		const apps = await (await fetch('/applications', {headers: m})).json();
		return [tok.id, apps.data.find(a => a.name === `+js(shopName)+`).id, read.status, refused.status] })()`)
	if len(got) != 4 || got[2] != float64(200) || got[3] != float64(403) {
		t.Fatalf("[token, shop id, read, refused call] = %v, want a read answered 200 and a call refused 403", got)
	}
	tokenID, shopID := got[0].(string), got[1].(string)
	// The overview's recent lines: local times, the denied line badged.
	open(t, ctx, "overview")
	until(t, ctx, "recent activity", `document.querySelector('#recent .badge.denied') &&
		[...document.querySelectorAll('#recent time')].every(e => e.title.endsWith('Z (UTC)') && !e.textContent.includes('.'))`)

	open(t, ctx, "logs")
	rows := `[...document.querySelectorAll('#log-list tbody tr')]`
	until(t, ctx, "the token's line by the shop's name", rows+`.some(r => r.children[1].textContent === 'token '+`+js(tokenID)+` &&
		r.querySelector('.actor-name')?.textContent === `+js(shopName)+` && r.querySelector('.actor').title === `+js(shopID)+`)`)
	until(t, ctx, "the denied line with its badge", rows+`.some(r => r.children[2].textContent.startsWith('denied') &&
		r.querySelector('.badge.denied')?.textContent === 'denied' && r.querySelector('.actor-name')?.textContent === `+js(shopName)+`)`)
	noXSS(t, ctx, "audit log")
	// Local time to the second with its zone; the exact UTC time in the title.
	when := eval[[]string](t, ctx, `(() => { const e = document.querySelector('#log-list tbody time'); return [e.textContent, e.title, e.getAttribute('datetime')] })()`)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S`).MatchString(when[0]) || when[1] != when[2]+" (UTC)" || !strings.HasSuffix(when[2], "Z") {
		t.Errorf("[time shown, title, datetime] = %q, want a local time to the second with its zone and the UTC time in the title", when)
	}
	shot(t, ctx, "logs")

	// Outcome denied: only denied lines, each with its badge; the filter
	// is in the hash.
	set(t, ctx, "#log-outcome", "denied")
	click(t, ctx, "#log-filter")
	until(t, ctx, "denied lines only", `location.hash.includes('outcome=denied') && `+rows+`.length > 0 &&
		`+rows+`.every(r => r.querySelector('.badge.denied') && r.children[2].textContent.startsWith('denied'))`)
	// The shop's lines only, chosen by name.
	set(t, ctx, "#log-outcome", "")
	set(t, ctx, "#log-actor", shopID)
	click(t, ctx, "#log-filter")
	until(t, ctx, "the shop's lines only", `location.hash.includes('actor_id='+`+js(shopID)+`) && `+rows+`.length >= 3 &&
		`+rows+`.every(r => r.querySelector('.actor').title === `+js(shopID)+`) && `+rows+`.some(r => r.querySelector('.badge.denied'))`)
	// A link to a filtered view (here: the management key's lines, by a
	// free id) opens with its filters in the form and applied.
	mgmtID := eval[string](t, ctx, `(async () => (await (await fetch('/applications/key', {headers: {'SVC-API-KEY': `+js(mgmt)+`}})).json()).id)()`)
	eval[bool](t, ctx, `(() => { location.hash = '#/logs?operation=create&actor_id=`+mgmtID+`'; return true })()`)
	until(t, ctx, "the linked view", `document.querySelector('#page-logs[data-ready]') && document.querySelector('#log-operation').value === 'create' &&
		document.querySelector('#log-actor').value === `+js(mgmtID)+` && `+rows+`.length > 0 &&
		`+rows+`.every(r => r.children[2].textContent === 'create' && r.querySelector('.actor').title === `+js(mgmtID)+`)`)
	set(t, ctx, "#log-actor", "-other-")
	set(t, ctx, "#log-actor-id", "no-such-actor")
	click(t, ctx, "#log-filter")
	until(t, ctx, "a free actor id", `document.querySelector('#log-list')?.textContent === 'No log lines match.'`)

	// The token's accesses, from its line.
	eval[bool](t, ctx, `(() => { location.hash = '#/logs?entity_type=token&entity_id=`+tokenID+`'; return true })()`)
	click(t, ctx, `#log-list button[data-action=access][data-token="`+tokenID+`"]`)
	until(t, ctx, "the token's accesses", `[...document.querySelectorAll('#token-access-list tbody tr')].some(r =>
		r.children[2].textContent === 'get' && r.children[3].textContent === 'reveal' && r.querySelector('.actor-name')?.textContent === `+js(shopName)+`)`)
	noXSS(t, ctx, "token accesses")
}

// TestConsoleAuditLogWithoutNames: a key that may read the log but not
// the applications sees actors by kind and id, a note saying why, and
// filters by an actor id typed; a link's filter the form cannot hold is
// left out and said so beside its field.
func TestConsoleAuditLogWithoutNames(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	got := eval[[]string](t, ctx, `(async () => {
		const m = {'SVC-API-KEY': `+js(mgmt)+`, 'Content-Type': 'application/json'};
		const app = await (await fetch('/applications', {method: 'POST', headers: m,
			body: JSON.stringify({name: 'auditor', type: 'management', permissions: ['log:read']})})).json();
		const me = await (await fetch('/applications/key', {headers: m})).json();
		return [app.key, app.id, me.id] })()`)
	auditorKey, auditorID, mgmtID := got[0], got[1], got[2]
	signIn(t, ctx, auditorKey)
	open(t, ctx, "logs")
	rows := `[...document.querySelectorAll('#log-list tbody tr')]`
	// (The auditor's own lines are the newest: the overview it signed in
	// to was refused the lists it may not read.)
	until(t, ctx, "actors by id", rows+`.some(r => r.querySelector('.actor').textContent === 'application '+`+js(auditorID)+`) &&
		!document.querySelector('.actor-name') && document.querySelector('#log-names-note').textContent.includes('cannot read the applications')`)
	if shown := eval[[]bool](t, ctx, `[!document.getElementById('log-actor').closest('.field').hidden, !document.getElementById('log-actor-id').closest('.field').hidden]`); mustJSON(shown) != "[false,true]" {
		t.Errorf("[actor list shown, actor id shown] = %v, want only the id", shown)
	}
	set(t, ctx, "#log-actor-id", mgmtID)
	click(t, ctx, "#log-filter")
	until(t, ctx, "the management key's lines", `location.hash.includes('actor_id='+`+js(mgmtID)+`) && `+rows+`.length > 0 &&
		`+rows+`.every(r => r.querySelector('.actor').textContent === 'application '+`+js(mgmtID)+`)`)
	eval[bool](t, ctx, `(() => { location.hash = '#/logs?operation=sing&outcome=denied&start_date=soon'; return true })()`)
	until(t, ctx, "a link's bad filters said", `document.querySelector('#log-outcome').value === 'denied' && document.querySelector('#log-operation').value === '' &&
		document.querySelector('#log-form [data-error-for=operation]').textContent.includes('"sing"') &&
		document.querySelector('#log-form [data-error-for=start_date]').textContent.includes('"soon"')`)
}
