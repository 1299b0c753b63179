package console_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// api calls the API at base with key, outside the browser, and decodes
// the answer into out (when not nil); it fails the test unless the
// status is want.
func apiCall(t *testing.T, base, method, path, key string, body, out any, want int) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("SVC-API-KEY", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d", method, path, res.StatusCode, want)
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleApprovals: with an approval policy (1 of 3 approvers, the requester among them) on
// the creation of management applications, creating one on the
// applications page shows that it waits for approval (and the key it
// will have); the approvals page lists the changes with what they do (the
// XSS payload in the name shown as text); the requester's own approval is
// refused and the refusal shown; an approver approves one and rejects the
// other, and the page shows them applied and rejected.
func TestConsoleApprovals(t *testing.T) {
	ctx := tab(t)
	base, mgmt := testServer(t)
	do(t, ctx, "load the console", chromedp.Navigate(base+"/console/"))
	signIn(t, ctx, mgmt)
	open(t, ctx, "applications")
	var ids []string
	var keys []string
	for _, name := range []string{"Approver one", "Approver two"} {
		k := createApp(t, ctx, name, "management", "[]", "tenant:read", "application:read")
		var app struct {
			ID string `json:"id"`
		}
		apiCall(t, base, "GET", "/applications/key", k, nil, &app, http.StatusOK)
		ids, keys = append(ids, app.ID), append(keys, k)
	}
	// The requester is an approver too: still it cannot approve its own.
	var self struct {
		ID string `json:"id"`
	}
	apiCall(t, base, "GET", "/applications/key", mgmt, nil, &self, http.StatusOK)
	apiCall(t, base, "PUT", "/tenants/self/approval-policy", mgmt, map[string]any{"required": 1, "approvers": append(ids, self.ID),
		"operations": []string{"application.create_management"}, "ttl_seconds": 3600}, nil, http.StatusOK)

	// Two held creations: each waits, its key shown once.
	for _, name := range []string{"Held " + xss, "Second"} {
		eval[bool](t, ctx, `(() => { document.getElementById('key-slot').replaceChildren(); return true })()`)
		set(t, ctx, "#app-name", name)
		set(t, ctx, "#app-type", "management")
		until(t, ctx, "management permissions", `document.querySelector('#app-permissions legend')?.textContent.includes('management')`)
		click(t, ctx, "#perm-tenant-read")
		rulesJSON(t, ctx, "[]")
		click(t, ctx, "#app-create")
		do(t, ctx, "waiting for approval", chromedp.WaitVisible(chromedp.CSS(`#pending-note`)), chromedp.WaitVisible(chromedp.CSS(`#new-key`)))
	}
	noXSS(t, ctx, "applications")

	// The requester cannot approve its own change.
	open(t, ctx, "approvals")
	until(t, ctx, "two pending changes", `document.querySelectorAll('#approval-list tbody tr').length === 2 &&
		document.querySelector('#approval-policy').textContent.includes('1 of 3')`)
	row := func(name string) string {
		return `[...document.querySelectorAll('#approval-list tbody tr')].find(r => r.querySelector('.change-after')?.textContent.includes(` + js(name) + `))`
	}
	eval[bool](t, ctx, `(() => { `+row("Held")+`.querySelector('[data-action=approve]').click(); return true })()`)
	until(t, ctx, "the self-approval refused", `document.querySelector('#approval-panel .form-error').textContent.includes('requester')`)
	noXSS(t, ctx, "approvals")

	// An approver approves one and rejects the other.
	signOut(t, ctx, mgmt)
	signIn(t, ctx, keys[0])
	open(t, ctx, "approvals")
	until(t, ctx, "the held creation, with its name as text", row("Held <img src=x onerror=")+` !== undefined`)
	eval[bool](t, ctx, `(() => { `+row("Held")+`.querySelector('[data-action=approve]').click(); return true })()`)
	until(t, ctx, "one change left pending", `document.querySelectorAll('#approval-list tbody tr').length === 1`)
	eval[bool](t, ctx, `(() => { const b = `+row("Second")+`.querySelector('[data-action=reject]'); b.click(); b.click(); return true })()`)
	until(t, ctx, "none pending", `document.querySelector('#approval-list').textContent.includes('No changes.')`)
	set(t, ctx, "#approval-status", "")
	until(t, ctx, "applied and rejected", `(() => { const s = [...document.querySelectorAll('#approval-list .change-status')].map(e => e.textContent).sort().join(); return s === 'applied,rejected' })()`)
	noXSS(t, ctx, "approvals")
	shot(t, ctx, "approvals")
}
