package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleRulesForm builds an application's access rules in the form
// (two rules added, moved up and back down), checks the JSON view follows
// and that bad JSON is refused with a message while the form keeps its
// rules, adds a rule as JSON and sees it in the form, previews what the
// grants would see on a sample card (a rule reveals token:read, token:delete
// refused with why), creates the application and reads its rules back in
// the edit form, previews the saved application chosen by name, and sees
// the tokens its key creates counted on the overview.
func TestConsoleRulesForm(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	signIn(t, ctx, mgmt)
	open(t, ctx, "applications")
	set(t, ctx, "#app-name", "builder "+xss)
	until(t, ctx, "no rule yet", `document.querySelector('#rules-none') !== null`)

	rule := func(n, sel string) string { return `#rule-rows [data-rule="` + n + `"] ` + sel }
	click(t, ctx, "#rule-add")
	set(t, ctx, rule("1", ".rule-container"), "/pci/")
	set(t, ctx, rule("1", ".rule-transform"), "reveal")
	click(t, ctx, rule("1", `input[value="token:read"]`))
	click(t, ctx, rule("1", `input[value="token:create"]`))
	click(t, ctx, "#rule-add")
	set(t, ctx, rule("2", ".rule-container"), "/")
	click(t, ctx, rule("2", `input[value="token:read"]`))
	click(t, ctx, rule("2", `input[value="token:create"]`))
	set(t, ctx, rule("2", ".rule-description"), "everything else masked "+xss)
	// Moved up, the second rule is first (priorities follow the order);
	// moved back down, the order is as built.
	click(t, ctx, rule("2", `[data-action="rule-up"]`))
	until(t, ctx, "moved up", `document.querySelector(`+js(rule("1", ".rule-container"))+`).value === '/'`)
	click(t, ctx, rule("1", `[data-action="rule-down"]`))
	until(t, ctx, "moved down", `document.querySelector(`+js(rule("1", ".rule-container"))+`).value === '/pci/'`)

	// The JSON view holds the rules built.
	click(t, ctx, "#rules-mode")
	do(t, ctx, "JSON view", chromedp.WaitVisible(chromedp.CSS(`#app-rules`)))
	var built []map[string]any
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `document.querySelector('#app-rules').value`)), &built); err != nil {
		t.Fatalf("the JSON view: %v", err)
	}
	if len(built) != 2 || built[0]["container"] != "/pci/" || built[0]["transform"] != "reveal" || mustJSON(built[0]["permissions"]) != `["token:create","token:read"]` ||
		built[1]["container"] != "/" || built[1]["transform"] != "mask" || built[1]["description"] != "everything else masked "+xss || built[1]["priority"] != 2.0 {
		t.Fatalf("rules built in the form, as JSON = %s, want /pci/ reveal then / mask", mustJSON(built))
	}

	// Bad JSON is refused, saying so; the form keeps its two rules.
	set(t, ctx, "#app-rules", `[{"priority": 1,`)
	until(t, ctx, "bad JSON refused", `document.querySelector('#rules-json-error').textContent.includes('not valid JSON')`)
	click(t, ctx, "#rules-mode")
	if hidden := eval[bool](t, ctx, `document.querySelector('#rules-json').hidden`); hidden {
		t.Fatal("the form was shown over bad JSON")
	}
	if n := eval[float64](t, ctx, `document.querySelectorAll('#rule-rows .rule').length`); n != 2 {
		t.Errorf("rules in the form after bad JSON = %v, want the 2 it had", n)
	}
	// A third rule written as JSON shows in the form; removed there.
	third := strings.TrimSuffix(mustJSON(built), "]") + `,{"priority":3,"container":"/hr/","transform":"reveal","permissions":["token:read"],"purposes":["payroll"]}]`
	set(t, ctx, "#app-rules", third)
	click(t, ctx, "#rules-mode")
	do(t, ctx, "form view", chromedp.WaitVisible(chromedp.CSS(`#rule-rows`)))
	if got := eval[string](t, ctx, `document.querySelector(`+js(rule("3", ".rule-purposes"))+`).value`); got != "payroll" {
		t.Errorf("rule 3's purposes in the form = %q, want payroll", got)
	}
	click(t, ctx, rule("3", `[data-action="rule-remove"]`))
	until(t, ctx, "rule 3 removed", `document.querySelectorAll('#rule-rows .rule').length === 2`)

	// The preview of these grants on a card (its default container
	// /pci/high/): token:read revealed by rule 1, token:delete refused.
	set(t, ctx, "#preview-type", "card")
	click(t, ctx, "#preview-run")
	until(t, ctx, "the preview", `document.querySelectorAll('#preview-result tbody tr').length === 6`)
	decisions := eval[[]string](t, ctx, `[...document.querySelectorAll('#preview-result tbody tr')].map(r => [...r.children].map(c => c.textContent).join(' | '))`)
	want := map[string]string{
		"token:read":   "token:read | allowed: reveal | rule 1 on /pci/ (reveal)",
		"token:create": "token:create | allowed: reveal | rule 1 on /pci/ (reveal)",
		"token:delete": "token:delete | refused | no rule on /pci/high/ grants token:delete",
	}
	for _, d := range decisions {
		perm, _, _ := strings.Cut(d, " |")
		if w, ok := want[perm]; ok && !strings.HasPrefix(d, w) {
			t.Errorf("preview row %q, want it to start %q", d, w)
		}
	}
	noXSS(t, ctx, "rules form")

	// Saved, and read back in the edit form.
	click(t, ctx, "#app-create")
	do(t, ctx, "the new key", chromedp.WaitVisible(chromedp.CSS(`#new-key`)))
	key := text(t, ctx, "#new-key")
	until(t, ctx, "builder listed", `[...document.querySelectorAll('#app-list .app-name')].some(e => e.textContent.startsWith('builder'))`)
	if n := eval[float64](t, ctx, `document.querySelectorAll('#rule-rows .rule').length`); n != 0 {
		t.Errorf("rules in the form after creating = %v, want none", n)
	}
	eval[bool](t, ctx, `(() => { const row = [...document.querySelectorAll('#app-list tr')].find(r => r.querySelector('.app-name')?.textContent.startsWith('builder'));
		row.querySelector('button[data-action=edit]').click(); return true })()`)
	until(t, ctx, "the rules read back", `document.querySelectorAll('#rule-rows .rule').length === 2 &&
		document.querySelector(`+js(rule("1", ".rule-container"))+`).value === '/pci/' &&
		document.querySelector(`+js(rule("1", ".rule-transform"))+`).value === 'reveal' &&
		document.querySelector(`+js(rule("1", `input[value="token:read"]`))+`).checked &&
		!document.querySelector(`+js(rule("1", `input[value="token:delete"]`))+`).checked &&
		document.querySelector(`+js(rule("2", ".rule-description"))+`).value === `+js("everything else masked "+xss))
	set(t, ctx, "#preview-containers", "/pci/ /eu/")
	click(t, ctx, "#preview-run")
	until(t, ctx, "the preview on two containers", `[...document.querySelectorAll('#preview-result tbody tr')].some(r => r.textContent.startsWith('token:read') && r.textContent.includes('allowed: mask'))`)
	shot(t, ctx, "rules")
	noXSS(t, ctx, "rules read back")
	// The saved application chosen by name: its own grants, decided on a
	// container its rules do not reach.
	eval[bool](t, ctx, `(() => { const s = document.querySelector('#preview-app');
		s.value = [...s.options].find(o => o.textContent.startsWith('builder')).value; s.dispatchEvent(new Event('change')); return true })()`)
	set(t, ctx, "#preview-containers", "/pci/high/")
	click(t, ctx, "#preview-run")
	until(t, ctx, "the preview of the saved application", `[...document.querySelectorAll('#preview-result tbody tr')].some(r => r.textContent === 'token:read' + 'allowed: reveal' + 'rule 1 on /pci/ (reveal)')`)

	// The overview of the management key counts the builder's tokens by
	// type and container.
	status := eval[[]float64](t, ctx, `(async () => {
		const k = {'SVC-API-KEY': `+js(key)+`, 'Content-Type': 'application/json'};
		const out = [];
		for (const containers of [['/pci/'], ['/pci/'], ['/eu/']]) {
			out.push((await fetch('/tokens', {method: 'POST', headers: k, body: JSON.stringify({type: 'token', data: 'x', containers})})).status);
		}
		return out })()`)
	if got := mustJSON(status); got != "[201,201,201]" {
		t.Fatalf("tokens created with the builder's key: %s, want [201,201,201]", got)
	}
	open(t, ctx, "overview")
	until(t, ctx, "token figure", `document.querySelector('#figures [data-figure="/tokens"] .n')?.textContent === '3'`)
	until(t, ctx, "tokens by container", `[...document.querySelectorAll('#tokens-by-container tbody tr')].map(r => r.children[0].textContent + '=' + r.children[1].textContent).join(' ') === '/pci/=2 /eu/=1'`)
	if got := text(t, ctx, "#figures-hidden"); got != "" && eval[bool](t, ctx, `!document.querySelector('#figures-hidden').hidden`) {
		t.Errorf("the management key's overview hides figures: %q", got)
	}
	if n := text(t, ctx, `#figures [data-figure="/applications"] .n`); n != "2" {
		t.Errorf("applications figure = %q, want 2", n)
	}

	// A token key sees the figures it may list; the others are one quiet
	// line naming the permission that would show them.
	signOut(t, ctx, mgmt)
	signIn(t, ctx, key)
	until(t, ctx, "figures of the token key", `['3', '≥ 3'].includes(document.querySelector('#figures [data-figure="/tokens"] .n')?.textContent) &&
		!document.querySelector('#figures-hidden').hidden`)
	if got := text(t, ctx, "#figures-hidden"); !strings.Contains(got, "Applications (application:read or tenant:read)") || !strings.Contains(got, "Webhooks (webhook:read or tenant:read)") {
		t.Errorf("hidden figures line = %q", got)
	}
	if cards := eval[float64](t, ctx, `document.querySelectorAll('#figures .card').length`); cards != 1 {
		t.Errorf("the token key's overview shows %v cards, want only Tokens", cards)
	}
	noXSS(t, ctx, "overview")
}
