package console_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleFrozenApplication: an application frozen by the circuit
// breaker on reveals (here: its key read a decoy) shows a "frozen" badge
// on the applications page and a Release button (two clicks: the second
// confirms), after which the badge and the button are gone and its key
// works again.
func TestConsoleFrozenApplication(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	signIn(t, ctx, mgmt)
	open(t, ctx, "applications")
	key := createApp(t, ctx, "reader", "private",
		`[{"priority": 1, "container": "/", "transform": "reveal", "permissions": ["token:create", "token:read"]}]`)
	if badges := eval[float64](t, ctx, `document.querySelectorAll('#app-list .badge.frozen').length`); badges != 0 {
		t.Fatalf("%v frozen badges before any freeze", badges)
	}
	// A decoy planted as the reader's, then read with its key: the read
	// answers, the key is frozen.
	status := eval[[]any](t, ctx, `(async () => {
		const m = {'SVC-API-KEY': `+js(mgmt)+`, 'Content-Type': 'application/json'};
		const apps = await (await fetch('/applications', {headers: m})).json();
		const id = apps.data.find(a => a.name === 'reader').id;
		const d = await (await fetch('/decoys', {method: 'POST', headers: m,
			body: JSON.stringify({application_id: id, token: {type: 'token', data: 'bait'}})})).json();
		const k = {'SVC-API-KEY': `+js(key)+`};
		const read = await fetch('/tokens/' + d.id, {headers: k});
		const after = await fetch('/tokens/' + d.id, {headers: k});
		return [read.status, after.status] })()`)
	if got := mustJSON(status); got != "[200,403]" {
		t.Fatalf("[read of the decoy, the next call] = %s, want [200,403]", got)
	}
	open(t, ctx, "overview")
	open(t, ctx, "applications")
	until(t, ctx, "frozen badge", `[...document.querySelectorAll('#app-list tr')].some(r => r.querySelector('.app-name')?.textContent === 'reader' &&
		r.querySelector('.badge.frozen') && r.querySelector('button[data-action=unfreeze]'))`)
	shot(t, ctx, "applications-frozen")
	eval[bool](t, ctx, `(() => { const row = [...document.querySelectorAll('#app-list tr')].find(r => r.querySelector('.app-name')?.textContent === 'reader');
		const b = row.querySelector('button[data-action=unfreeze]'); b.click(); b.click(); return true })()`)
	until(t, ctx, "badge gone after release", `document.querySelectorAll('#app-list .app-name').length > 0 &&
		document.querySelectorAll('#app-list .badge.frozen, #app-list button[data-action=unfreeze]').length === 0`)
	if got := eval[float64](t, ctx, `(async () => (await fetch('/permissions', {headers: {'SVC-API-KEY': `+js(key)+`}})).status)()`); got != 200 {
		t.Fatalf("after release, the key's call answered %v, want 200", got)
	}
}
