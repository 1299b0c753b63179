package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// sameByte is randomness that gives one byte forever, so every alias drawn
// from it is the same: a forced collision.
type sameByte byte

func (b sameByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestAliasesOverHTTP: alias ids from POST /tokens and POST /tokenize, and
// an alias holding spaces and dashes used, URL-escaped, wherever an id is:
// GET, PATCH and DELETE /tokens/{id}, /detokenize, GET /tokens?id=, its
// cursors, and the logs.
func TestAliasesOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:update", "token:delete", "token:search"}}}})

	r := s.do(t, "POST", "/tokens", key, map[string]any{"type": "card", "id": "{{ data.number | alias_card: true, true }}",
		"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens with an alias id", r, 201)
	var card tokenvault.Token
	r.json(t, &card)
	if len(card.ID) != 16 || card.ID[:8] != "42424242" || card.ID[12:] != "4242" || card.ID == "4242424242424242" {
		t.Fatalf("alias = %q", card.ID)
	}

	r = s.do(t, "POST", "/tokenize", key, map[string]any{"n": map[string]any{"type": "token", "data": "4242 4242-4242 4242",
		"id": "{{ data | alias_card: false, true }}"}})
	wantStatus(t, "POST /tokenize with an alias id", r, 201)
	var out struct{ N tokenvault.Token }
	r.json(t, &out)
	alias := out.N.ID
	if len(alias) != 19 || alias[4] != ' ' || alias[9] != '-' || alias[15:] != "4242" || alias == "4242 4242-4242 4242" {
		t.Fatalf("alias = %q, want the delimiters and last four kept", alias)
	}
	path := "/tokens/" + url.PathEscape(alias)
	if !strings.Contains(path, "%20") {
		t.Fatalf("escaped path %q has no %%20", path)
	}

	r = s.do(t, "GET", path, key, nil)
	wantStatus(t, "GET /tokens/{alias}", r, 200)
	var got tokenvault.Token
	r.json(t, &got)
	if got.ID != alias || got.Data != "4242 4242-4242 4242" {
		t.Errorf("GET /tokens/{alias} = %s", r.body)
	}
	r = s.do(t, "PATCH", path, key, `{"metadata": {"k": "v"}}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, "PATCH /tokens/{alias}", r, 200)

	r = s.do(t, "POST", "/detokenize", key, map[string]any{"n": "{{ " + alias + " | last4 }}", "c": "{{ " + card.ID + " | json: '$.number' }}"})
	wantStatus(t, "POST /detokenize by alias", r, 200)
	if string(r.body) != `{"c":"4242424242424242","n":"4242"}`+"\n" {
		t.Errorf("detokenize = %s", r.body)
	}

	q := url.Values{"id": {alias, card.ID}, "size": {"1"}}
	r = s.do(t, "GET", "/tokens?"+q.Encode(), key, nil)
	wantStatus(t, "GET /tokens?id=<aliases>", r, 200)
	var page tokenvault.Page[tokenvault.Token]
	r.json(t, &page)
	if len(page.Data) != 1 || page.Pagination.TotalItems != 2 || page.Pagination.After == "" {
		t.Fatalf("first page = %s", r.body)
	}
	first := page.Data[0].ID
	q.Set("start", page.Pagination.After)
	r = s.do(t, "GET", "/tokens?"+q.Encode(), key, nil)
	wantStatus(t, "GET /tokens?id=<aliases>&start=", r, 200)
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID == first || (page.Data[0].ID != alias && page.Data[0].ID != card.ID) {
		t.Errorf("second page = %s", r.body)
	}

	r = s.do(t, "POST", "/tokens/search", key, map[string]any{"query": `id:"` + alias + `"`})
	wantStatus(t, "POST /tokens/search id:<alias>", r, 200)
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != alias {
		t.Errorf("search by alias = %s", r.body)
	}

	r = s.do(t, "GET", "/logs?"+url.Values{"entity_type": {"token"}, "entity_id": {alias}}.Encode(), s.mgmt, nil)
	wantStatus(t, "GET /logs?entity_id=<alias>", r, 200)
	var logs tokenvault.Page[tokenvault.Log]
	r.json(t, &logs)
	if len(logs.Data) < 3 || logs.Data[0].EntityID != alias {
		t.Errorf("logs of the alias = %s", r.body)
	}

	r = s.do(t, "DELETE", path, key, nil)
	wantStatus(t, "DELETE /tokens/{alias}", r, 204)
	r = s.do(t, "GET", path, key, nil)
	wantStatus(t, "GET /tokens/{deleted alias}", r, 404)
}

// TestAliasErrorsOverHTTP: a forced collision is a 409 naming the reason,
// a broken display rule or expression a 400 at id.
func TestAliasErrorsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Rand = sameByte(9) })
	_, key := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:update"}}}})
	req := map[string]any{"type": "token", "data": "424242424242", "id": "{{ data | alias_card: true, true }}"}
	r := s.do(t, "POST", "/tokenize", key, req)
	wantStatus(t, "POST /tokenize, first alias", r, 201)
	r = s.do(t, "POST", "/tokenize", key, req)
	wantStatus(t, "POST /tokenize, the same alias again", r, 409)
	if p := r.problem(t); !strings.Contains(p.Detail, "no free alias") {
		t.Errorf("409 detail = %q, want the reason named", p.Detail)
	}
	r = s.do(t, "POST", "/tokens", key, req)
	wantStatus(t, "POST /tokens, the same alias again", r, 409)

	// A patch of an alias card's mask is held to the display rule too.
	r = s.do(t, "POST", "/tokens", key, map[string]any{"type": "card", "id": "{{ data.number | alias_card: true, true }}",
		"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens, an alias card", r, 201)
	var card tokenvault.Token
	r.json(t, &card)
	r = s.do(t, "PATCH", "/tokens/"+url.PathEscape(card.ID), key, `{"mask": "{{ data.number | slice: 0, 10 }}"}`,
		"Content-Type", "application/merge-patch+json")
	wantStatus(t, "PATCH /tokens/{alias} with a mask of the first ten", r, 400)
	if p := r.problem(t); p.Errors["mask"] == nil {
		t.Errorf("errors = %v, want one at mask", p.Errors)
	}

	for name, body := range map[string]map[string]any{
		"display rule": {"type": "card", "id": "{{ data.number | alias_preserve_format: 10 }}",
			"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}},
		"no alias filter": {"type": "token", "data": "secret", "id": "{{ data }}"},
		"too short":       {"type": "token", "data": "4242424242", "id": "{{ data | alias_card: true, true }}"},
	} {
		r := s.do(t, "POST", "/tokens", key, body)
		wantStatus(t, "POST /tokens, "+name, r, 400)
		if p := r.problem(t); p.Errors["id"] == nil {
			t.Errorf("%s: errors = %v, want one at id", name, p.Errors)
		}
	}
}
