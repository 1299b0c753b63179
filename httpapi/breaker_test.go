package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestRevealBudgetOverHTTP: an application's reveal_budget is created
// and shown; a list past it shows only the budget's number of tokens
// revealed; with refuse and freeze, the read that crosses it is a 403 and
// every later call of the key a 403 saying it is frozen, until a manager
// releases it at POST /applications/{id}/unfreeze. Every exchange is held
// to openapi.yaml (newServer).
func TestRevealBudgetOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "writer", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create"}}}})
	wantStatus(t, "POST /applications (writer)", r, http.StatusCreated)
	var writer tokenvault.Application
	r.json(t, &writer)
	var ids []string
	for _, d := range []string{"a-secret", "b-secret", "c-secret"} {
		r := s.do(t, "POST", "/tokens", string(writer.Key), map[string]any{"type": "token", "data": d})
		wantStatus(t, "POST /tokens", r, http.StatusCreated)
		var tok tokenvault.Token
		r.json(t, &tok)
		ids = append(ids, tok.ID)
	}
	r = s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "reader", "type": "private",
		"rules":         []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:read"}}},
		"reveal_budget": map[string]any{"tokens": 2, "window": "1h", "action": "refuse", "freeze": true}})
	wantStatus(t, "POST /applications (reader with a budget)", r, http.StatusCreated)
	var reader tokenvault.Application
	r.json(t, &reader)
	if b := reader.RevealBudget; b == nil || b.Tokens != 2 || b.Action != "refuse" || !b.Freeze {
		t.Fatalf("created with reveal_budget %+v", b)
	}
	key := string(reader.Key)
	for _, id := range ids[:2] {
		wantStatus(t, "GET /tokens/{id} within the budget", s.do(t, "GET", "/tokens/"+id, key, nil), http.StatusOK)
	}
	r = s.do(t, "GET", "/tokens/"+ids[2], key, nil)
	wantStatus(t, "GET /tokens/{id} past a refusing budget", r, http.StatusForbidden)
	if p := r.problem(t); !strings.Contains(p.Detail, "reveal budget") {
		t.Errorf("past the budget: detail %q, want it to name the reveal budget", p.Detail)
	}
	r = s.do(t, "GET", "/tokens/"+ids[0], key, nil)
	wantStatus(t, "GET /tokens/{id} of a frozen key", r, http.StatusForbidden)
	if p := r.problem(t); !strings.Contains(p.Detail, "frozen") {
		t.Errorf("frozen key: detail %q, want it to say the key is frozen", p.Detail)
	}
	wantStatus(t, "GET /tokens of a frozen key", s.do(t, "GET", "/tokens", key, nil), http.StatusForbidden)

	r = s.do(t, "GET", "/applications/"+reader.ID, s.mgmt, nil)
	wantStatus(t, "GET /applications/{id}", r, http.StatusOK)
	var got tokenvault.Application
	r.json(t, &got)
	if got.FrozenAt == nil || got.FrozenReason != "reveal_budget" {
		t.Fatalf("GET /applications/{id}: frozen_at %v, frozen_reason %q", got.FrozenAt, got.FrozenReason)
	}
	wantStatus(t, "POST unfreeze by the frozen key", s.do(t, "POST", "/applications/"+reader.ID+"/unfreeze", key, nil), http.StatusForbidden)
	r = s.do(t, "POST", "/applications/"+reader.ID+"/unfreeze", s.mgmt, nil)
	wantStatus(t, "POST /applications/{id}/unfreeze", r, http.StatusOK)
	if strings.Contains(string(r.body), "frozen_at") {
		t.Errorf("released, the application still shows frozen_at: %s", r.body)
	}
	wantStatus(t, "GET /tokens/{id} after release", s.do(t, "GET", "/tokens/"+ids[2], key, nil), http.StatusOK)

	r = s.do(t, "PUT", "/applications/"+reader.ID, s.mgmt, map[string]any{"name": "reader", "reveal_budget": map[string]any{"tokens": 1, "window": "soon"}})
	wantStatus(t, "PUT a bad reveal_budget", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["reveal_budget.window"] == nil {
		t.Errorf("errors %v, want one at reveal_budget.window", p.Errors)
	}
}

// TestDecoysOverHTTP: a management key plants a decoy at POST /decoys and
// lists it at GET /decoys (nobody else may); a read of it answers 200 as
// any read, and the reader's next call is a 403 saying the key is frozen.
func TestDecoysOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "backend", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	wantStatus(t, "POST /applications", r, http.StatusCreated)
	var app tokenvault.Application
	r.json(t, &app)
	key := string(app.Key)

	r = s.do(t, "POST", "/decoys", s.mgmt, map[string]any{"application_id": app.ID, "token": map[string]any{"type": "token", "data": "bait"}})
	wantStatus(t, "POST /decoys", r, http.StatusCreated)
	var decoy tokenvault.Decoy
	r.json(t, &decoy)
	if decoy.ID == "" || !decoy.Freeze || decoy.ApplicationID != app.ID {
		t.Fatalf("POST /decoys = %s", r.body)
	}
	wantStatus(t, "POST /decoys without application_id", s.do(t, "POST", "/decoys", s.mgmt, map[string]any{"token": map[string]any{"type": "token", "data": "x"}}), http.StatusBadRequest)
	wantStatus(t, "GET /decoys by a private key", s.do(t, "GET", "/decoys", key, nil), http.StatusForbidden)
	// Another tenant's application cannot be named: it does not exist here.
	other, err := s.v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	r = s.do(t, "POST", "/decoys", string(other.Application.Key), map[string]any{"application_id": app.ID, "token": map[string]any{"type": "token", "data": "x"}})
	wantStatus(t, "POST /decoys naming another tenant's application", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["application_id"] == nil {
		t.Errorf("errors %v, want one at application_id", p.Errors)
	}
	r = s.do(t, "GET", "/decoys", s.mgmt, nil)
	wantStatus(t, "GET /decoys", r, http.StatusOK)
	if !strings.Contains(string(r.body), decoy.ID) {
		t.Fatalf("GET /decoys = %s, want the decoy", r.body)
	}

	r = s.do(t, "GET", "/tokens/"+decoy.ID, key, nil)
	wantStatus(t, "GET /tokens/{decoy}", r, http.StatusOK)
	if strings.Contains(string(r.body), "decoy") {
		t.Errorf("a decoy's answer tells it is one: %s", r.body)
	}
	r = s.do(t, "GET", "/tokens", key, nil)
	wantStatus(t, "GET /tokens after reading a decoy", r, http.StatusForbidden)
	if p := r.problem(t); !strings.Contains(p.Detail, "frozen") {
		t.Errorf("detail %q, want it to say the key is frozen", p.Detail)
	}
	wantStatus(t, "POST unfreeze", s.do(t, "POST", "/applications/"+app.ID+"/unfreeze", s.mgmt, nil), http.StatusOK)
	wantStatus(t, "GET /tokens/{decoy} after release", s.do(t, "GET", "/tokens/"+decoy.ID, key, nil), http.StatusOK)
}
