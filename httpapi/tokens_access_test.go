package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestTokenAccessOverHTTP: a card read revealed by one key and masked by
// another, detokenized into a proxy request and a reactor's arguments,
// and found by a search; GET /tokens/{id}/access lists each, newest
// first, with its actor, channel and transform, by cursor; POST
// /tokens/access/search lists the same for the subject's metadata;
// another tenant's token is 404, a key without token:access:read 403.
func TestTokenAccessOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	defer dest.Close()
	reader := func(name, transform string) (string, string) {
		return s.app(t, map[string]any{"name": name, "type": "private",
			"rules": []map[string]any{{"priority": 1, "container": "/", "transform": transform,
				"permissions": []string{"token:create", "token:read", "token:search", "token:use"}}}})
	}
	revealerID, revealer := reader("revealer", "reveal")
	maskerID, masker := reader("masker", "mask")

	r := s.do(t, "POST", "/tokens", revealer, map[string]any{"type": "card", "metadata": map[string]string{"customer": "c1"},
		"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var card tokenvault.Token
	r.json(t, &card)

	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "echo",
		"code": `module.exports = async (req) => ({raw: {n: req.args.n}})`, "configuration": map[string]any{}})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)

	type access struct{ actor, channel, transform string }
	var want []access
	step := func(what string, key, actor, channel, transform, method, path string, body any, header ...string) {
		t.Helper()
		r := s.do(t, method, path, key, body, header...)
		if r.status != http.StatusOK {
			t.Fatalf("%s = %d %s", what, r.status, r.body)
		}
		want = append([]access{{actor, channel, transform}}, want...)
	}
	step("GET revealed", revealer, revealerID, "get", "reveal", "GET", "/tokens/"+card.ID, nil)
	step("GET masked", masker, maskerID, "get", "mask", "GET", "/tokens/"+card.ID, nil)
	step("POST /detokenize", revealer, revealerID, "detokenize", "reveal", "POST", "/detokenize", map[string]any{"n": "{{" + card.ID + "}}"})
	step("POST /proxy", revealer, revealerID, "proxy", "reveal", "POST", "/proxy/pay", `{"n": "{{`+card.ID+`}}"}`, "SVC-PROXY-KEY", p.Key)
	step("POST /reactors/{id}/react", revealer, revealerID, "reactor", "reveal", "POST", "/reactors/"+re.ID+"/react",
		map[string]any{"args": map[string]any{"n": "{{" + card.ID + "}}"}})
	step("POST /tokens/search", masker, maskerID, "search", "mask", "POST", "/tokens/search", map[string]any{"query": "metadata.customer:c1"})
	step("GET /tokens listed", revealer, revealerID, "list", "reveal", "GET", "/tokens?metadata.customer=c1", nil)

	check := func(what string, got []tokenvault.TokenAccess) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d accesses, want %d: %+v", what, len(got), len(want), got)
		}
		for i, a := range got {
			w := want[i]
			if a.TokenID != card.ID || a.ActorID != w.actor || a.ActorType != "application" || a.ApplicationID != w.actor ||
				a.Channel != w.channel || a.Transform != w.transform {
				t.Errorf("%s: access %d = %+v, want %+v", what, i, a, w)
			}
		}
	}
	var all []tokenvault.TokenAccess
	path := "/tokens/" + card.ID + "/access?size=3"
	for calls := 0; ; calls++ {
		if calls > 3 {
			t.Fatal("the walk does not end")
		}
		r := s.do(t, "GET", path, s.mgmt, nil)
		wantStatus(t, "GET /tokens/{id}/access", r, http.StatusOK)
		var page tokenvault.Page[tokenvault.TokenAccess]
		r.json(t, &page)
		all = append(all, page.Data...)
		if page.Pagination.After == "" {
			break
		}
		path = "/tokens/" + card.ID + "/access?size=3&start=" + page.Pagination.After
	}
	check("GET /tokens/{id}/access", all)

	r = s.do(t, "POST", "/tokens/access/search", s.mgmt, map[string]any{"metadata": map[string]string{"customer": "C1"}})
	wantStatus(t, "POST /tokens/access/search", r, http.StatusOK)
	var subject tokenvault.SubjectAccessPage
	r.json(t, &subject)
	check("POST /tokens/access/search", subject.Data)
	if len(subject.Tokens) != 1 || subject.Tokens[0] != card.ID {
		t.Errorf("tokens = %v, want the card", subject.Tokens)
	}
	r = s.do(t, "POST", "/tokens/access/search", s.mgmt, map[string]any{"metadata": map[string]string{}})
	wantStatus(t, "POST /tokens/access/search without metadata", r, http.StatusBadRequest)

	other, err := s.v.CreateTenant(t.Context(), tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	r = s.do(t, "GET", "/tokens/"+card.ID+"/access", string(other.Application.Key), nil)
	wantStatus(t, "another tenant's token", r, http.StatusNotFound)
	_, logReader := s.app(t, map[string]any{"name": "l", "type": "management", "permissions": []string{"log:read"}})
	r = s.do(t, "GET", "/tokens/"+card.ID+"/access", logReader, nil)
	wantStatus(t, "a key without token:access:read", r, http.StatusForbidden)
	r = s.do(t, "GET", "/tokens/"+card.ID+"/access", revealer, nil)
	wantStatus(t, "a private key", r, http.StatusForbidden)
	r = s.do(t, "GET", "/tokens/"+card.ID+"/access?page=2", s.mgmt, nil)
	wantStatus(t, "a page number (cursor pages only)", r, http.StatusBadRequest)
}
