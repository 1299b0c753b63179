package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestDeniedRequestsLoggedOverHTTP: a 403 writes one line to the key's
// tenant's log naming the route (the pattern, not the token's id), the
// client address, the permission and the container; a flood writes at
// most the bound; a key no tenant holds writes nothing; GET /logs filters
// by outcome, operation and actor_id, and refuses an unknown outcome.
func TestDeniedRequestsLoggedOverHTTP(t *testing.T) {
	const bound = 5
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Limits.DeniedLinesPerMinute = bound })
	var writer, pci tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "writer", "type": "private", "permissions": []string{"token:create"},
	}).json(t, &writer)
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "pci", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/pci/", "transform": "reveal", "permissions": []string{"token:read"}}},
	}).json(t, &pci)
	var tok tokenvault.Token
	r := s.do(t, "POST", "/tokens", string(writer.Key), map[string]any{"type": "token", "data": "x", "containers": []string{"/general/"}})
	wantStatus(t, "POST /tokens", r, 201)
	r.json(t, &tok)

	wantStatus(t, "GET /tokens/{id} with the /pci/ key", s.do(t, "GET", "/tokens/"+tok.ID, string(pci.Key), nil), 403)
	wantStatus(t, "GET /tokens/{id} with an unknown key", s.do(t, "GET", "/tokens/"+tok.ID, "key_"+strings.Repeat("q", 40), nil), 401)

	var page tokenvault.Page[tokenvault.Log]
	s.do(t, "GET", "/logs?outcome=denied", s.mgmt, nil).json(t, &page)
	if len(page.Data) != 1 {
		t.Fatalf("GET /logs?outcome=denied = %d lines, want 1: %+v", len(page.Data), page.Data)
	}
	l := page.Data[0]
	if l.Operation != "denied" || l.Outcome != "denied" || l.ActorID != pci.ID {
		t.Errorf("denied line = %+v, want operation and outcome denied, actor %s", l, pci.ID)
	}
	for _, want := range []string{"GET /tokens/{id}", "403", "127.0.0.1", "token:read on /general/"} {
		if !strings.Contains(l.Message, want) {
			t.Errorf("denied line's message %q does not name %q", l.Message, want)
		}
	}
	if strings.Contains(l.Message, tok.ID) || strings.Contains(l.Message, string(pci.Key)) {
		t.Errorf("denied line's message %q holds the token's id or the key", l.Message)
	}
	for _, q := range []string{"operation=denied", "actor_id=" + pci.ID, "outcome=denied&actor_id=" + pci.ID} {
		var p tokenvault.Page[tokenvault.Log]
		s.do(t, "GET", "/logs?"+q, s.mgmt, nil).json(t, &p)
		if len(p.Data) != 1 || p.Data[0].ID != l.ID {
			t.Errorf("GET /logs?%s = %+v, want the denied line", q, p.Data)
		}
	}
	var allowed tokenvault.Page[tokenvault.Log]
	s.do(t, "GET", "/logs?outcome=allowed&size=100", s.mgmt, nil).json(t, &allowed)
	for _, a := range allowed.Data {
		if a.Outcome != "allowed" || a.Operation == "denied" {
			t.Errorf("GET /logs?outcome=allowed listed %+v", a)
		}
	}
	if len(allowed.Data) == 0 {
		t.Errorf("GET /logs?outcome=allowed listed nothing")
	}
	for _, q := range []string{"outcome=maybe", "operation=peek"} {
		r := s.do(t, "GET", "/logs?"+q, s.mgmt, nil)
		wantStatus(t, "GET /logs?"+q, r, 400)
		r.problem(t)
	}

	// A flood of 200 more refusals by the same key writes no more than
	// the key's own bound (a quarter of the tenant's, at least 1).
	for range 200 {
		s.do(t, "GET", "/tokens/"+tok.ID, string(pci.Key), nil)
	}
	s.do(t, "GET", "/logs?outcome=denied&size=100", s.mgmt, nil).json(t, &page)
	if keyBound := max(bound/4, 1); len(page.Data) != keyBound {
		t.Errorf("after a flood of 201 refusals of one key: %d denied lines, want the key's bound %d", len(page.Data), keyBound)
	}
	for _, l := range s.allLogs(t) {
		if strings.Contains(l.Message, string(pci.Key)) || strings.Contains(l.Message, "qqqq") {
			t.Errorf("line %s holds a key: %q", l.ID, l.Message)
		}
	}
}

// allLogs is every line of the bootstrap tenant's log, by cursor.
func (s *server) allLogs(t *testing.T) []tokenvault.Log {
	t.Helper()
	var out []tokenvault.Log
	path := "/logs?size=100"
	for {
		var p tokenvault.Page[tokenvault.Log]
		s.do(t, "GET", path, s.mgmt, nil).json(t, &p)
		out = append(out, p.Data...)
		if p.Pagination.After == "" {
			return out
		}
		path = "/logs?size=100&start=" + url.QueryEscape(p.Pagination.After)
	}
}
