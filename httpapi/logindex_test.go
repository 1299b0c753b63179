package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestReadLogsByEntityOverHTTP: the lines of a token's reads are listed by
// GET /logs?entity_type=token&entity_id=, each once, both while their index
// entries are pending (a clock that does not move keeps them so) and once
// the Vault's indexer has written them (a real clock, waited for).
func TestReadLogsByEntityOverHTTP(t *testing.T) {
	t.Parallel()
	frozen := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, now := range map[string]func() time.Time{
		"pending": func() time.Time { return frozen },
		"indexed": time.Now,
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now = now })
			r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{
				"name": "reader", "type": "private", "permissions": []string{"token:create", "token:read"},
			})
			wantStatus(t, "POST /applications", r, http.StatusCreated)
			var app tokenvault.Application
			r.json(t, &app)
			r = s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "secret"})
			wantStatus(t, "POST /tokens", r, http.StatusCreated)
			var tok tokenvault.Token
			r.json(t, &tok)
			for range 3 {
				wantStatus(t, "GET /tokens/{id}", s.do(t, "GET", "/tokens/"+tok.ID, string(app.Key), nil), http.StatusOK)
			}
			if name == "indexed" {
				time.Sleep(time.Second) // the indexer takes lines 100 ms old, every 250 ms
			}
			for _, q := range []string{"entity_type=token&entity_id=" + tok.ID, "entity_type=token"} {
				r = s.do(t, "GET", "/logs?size=50&"+q, s.mgmt, nil)
				wantStatus(t, "GET /logs?"+q, r, http.StatusOK)
				var page tokenvault.Page[tokenvault.Log]
				r.json(t, &page)
				var ops []string
				for _, l := range page.Data {
					ops = append(ops, l.Operation)
				}
				if len(ops) != 4 || ops[0] != "read" || ops[1] != "read" || ops[2] != "read" || ops[3] != "create" {
					t.Errorf("GET /logs?%s: operations %v, want three reads and the create, newest first", q, ops)
				}
			}
		})
	}
}
