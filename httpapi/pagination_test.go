package httpapi_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestCursorWalkOverHTTP walks GET /tokens by cursor while tokens are
// added, and sees every token that existed when it began exactly once; a
// cursor that is not one is a 400 naming start.
func TestCursorWalkOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read"},
	}).json(t, &app)
	create := func(i int) string {
		var tok tokenvault.Token
		r := s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": fmt.Sprint("v", i)})
		wantStatus(t, "POST /tokens", r, 201)
		r.json(t, &tok)
		return tok.ID
	}
	var before []string
	for i := range 9 {
		before = append(before, create(i))
	}
	seen := map[string]int{}
	path := "/tokens?size=2"
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the walk did not end")
		}
		var page tokenvault.Page[tokenvault.Token]
		r := s.do(t, "GET", path, string(app.Key), nil)
		wantStatus(t, "GET "+path, r, 200)
		r.json(t, &page)
		for _, tok := range page.Data {
			seen[tok.ID]++
		}
		if page.Pagination.After == "" {
			break
		}
		path = "/tokens?size=2&start=" + url.QueryEscape(page.Pagination.After)
		create(100 + pages)
	}
	for _, id := range before {
		if seen[id] != 1 {
			t.Errorf("token %s seen %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("token %s seen %d times", id, n)
		}
	}

	// Not base64, and base64 of three NUL bytes, which no cursor holds.
	for _, bad := range []string{"%21%21", "AAAA"} {
		r := s.do(t, "GET", "/tokens?start="+bad, string(app.Key), nil)
		wantStatus(t, "GET /tokens?start="+bad, r, 400)
		if p := r.problem(t); p.Errors["start"] == nil {
			t.Errorf("problem %+v does not name start", p)
		}
	}
}

// TestSearchCursorOverHTTP walks POST /tokens/search by the cursor in its
// body (start, as openapi.yaml documents it), and sees every match once.
func TestSearchCursorOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read", "token:search"},
	}).json(t, &app)
	for i := range 5 {
		r := s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": fmt.Sprint("v", i), "metadata": map[string]any{"k": "x"}})
		wantStatus(t, "POST /tokens", r, 201)
	}
	seen := map[string]int{}
	body := map[string]any{"query": "metadata.k:x", "size": 2}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("the walk did not end")
		}
		var page tokenvault.Page[tokenvault.Token]
		r := s.do(t, "POST", "/tokens/search", string(app.Key), body)
		wantStatus(t, "POST /tokens/search", r, 200)
		r.json(t, &page)
		for _, tok := range page.Data {
			seen[tok.ID]++
		}
		if page.Pagination.After == "" {
			break
		}
		body["start"] = page.Pagination.After
	}
	if len(seen) != 5 {
		t.Errorf("the walk saw %d tokens, want 5", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("token %s seen %d times, want once", id, n)
		}
	}
	r := s.do(t, "POST", "/tokens/search", string(app.Key), map[string]any{"query": "metadata.k:x", "start": "!!"})
	wantStatus(t, "POST /tokens/search with start !!", r, 400)
	if p := r.problem(t); p.Errors["start"] == nil {
		t.Errorf("problem %+v does not name start", p)
	}
}
