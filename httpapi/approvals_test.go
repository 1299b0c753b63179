package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestApprovalsOverHTTP: with a policy of 2 of 3 approvers, regenerating
// a key answers 202 with the pending change (and the new key, which does
// not work yet); its requester cannot approve it (403); m-1 approvals
// leave it pending and the old key working, the m-th applies it; an
// approver counts once (409); an expired change cannot be approved (409,
// recorded as expired); GET /approvals lists them.
func TestApprovalsOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now = clock.Now })
	var approvers []tokenvault.Application
	for range 3 {
		r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "approver", "type": "management",
			"permissions": []string{"tenant:read", "application:read"}})
		if r.status != http.StatusCreated {
			t.Fatalf("create approver: %d %s", r.status, r.body)
		}
		var a tokenvault.Application
		r.json(t, &a)
		approvers = append(approvers, a)
	}
	target := approvers[2]
	r := s.do(t, "PUT", "/tenants/self/approval-policy", s.mgmt, map[string]any{"required": 2,
		"approvers":  []string{approvers[0].ID, approvers[1].ID, approvers[2].ID},
		"operations": []string{"application.regenerate_key"}, "ttl_seconds": 600})
	if r.status != http.StatusOK {
		t.Fatalf("PUT approval-policy: %d %s", r.status, r.body)
	}
	regenerate := func() (tokenvault.PendingChange, string) {
		t.Helper()
		r := s.do(t, "POST", "/applications/"+target.ID+"/regenerate", s.mgmt, nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("regenerate: %d %s, want 202", r.status, r.body)
		}
		var body struct {
			tokenvault.PendingChange
			Key string `json:"key"`
		}
		r.json(t, &body)
		if body.ID == "" || body.Status != "pending" || body.Key == "" || body.RequestedBy != s.boot.Application.ID || body.ExpiresAt.IsZero() {
			t.Fatalf("202 body %s: want the pending change, its requester, expiry and the new key", r.body)
		}
		return body.PendingChange, body.Key
	}
	c, newKey := regenerate()
	if r := s.do(t, "POST", "/approvals/"+c.ID+"/approve", s.mgmt, nil); r.status != http.StatusForbidden {
		t.Errorf("approve by the requester: %d %s, want 403", r.status, r.body)
	}
	if r := s.do(t, "POST", "/approvals/"+c.ID+"/approve", string(approvers[0].Key), nil); r.status != http.StatusOK {
		t.Fatalf("first approval: %d %s", r.status, r.body)
	}
	if r := s.do(t, "POST", "/approvals/"+c.ID+"/approve", string(approvers[0].Key), nil); r.status != http.StatusConflict {
		t.Errorf("second approval by the same approver: %d %s, want 409", r.status, r.body)
	}
	if r := s.do(t, "GET", "/applications/key", string(target.Key), nil); r.status != http.StatusOK {
		t.Errorf("the old key after m-1 approvals: %d, want 200", r.status)
	}
	if r := s.do(t, "GET", "/applications/key", newKey, nil); r.status != http.StatusUnauthorized {
		t.Errorf("the new key after m-1 approvals: %d, want 401", r.status)
	}
	r = s.do(t, "POST", "/approvals/"+c.ID+"/approve", string(approvers[1].Key), nil)
	var got tokenvault.PendingChange
	if r.status != http.StatusOK {
		t.Fatalf("m-th approval: %d %s", r.status, r.body)
	}
	if r.json(t, &got); got.Status != "applied" || len(got.Approvals) != 2 {
		t.Errorf("m-th approval: %s, want applied with 2 approvals", r.body)
	}
	if r := s.do(t, "GET", "/applications/key", newKey, nil); r.status != http.StatusOK {
		t.Errorf("the new key once applied: %d, want 200", r.status)
	}
	// An expired change.
	c, _ = regenerate()
	clock.Advance(11 * time.Minute)
	r = s.do(t, "POST", "/approvals/"+c.ID+"/approve", string(approvers[0].Key), nil)
	if r.status != http.StatusConflict {
		t.Errorf("approval of an expired change: %d %s, want 409", r.status, r.body)
	}
	r = s.do(t, "GET", "/approvals?status=expired", string(approvers[1].Key), nil)
	var list struct{ Data []tokenvault.PendingChange }
	if r.json(t, &list); r.status != http.StatusOK || len(list.Data) != 1 || list.Data[0].ID != c.ID {
		t.Errorf("GET /approvals?status=expired: %d %s", r.status, r.body)
	}
	if r := s.do(t, "GET", "/approvals?status=nope", s.mgmt, nil); r.status != http.StatusBadRequest {
		t.Errorf("GET /approvals?status=nope: %d, want 400", r.status)
	}
	// Removing the policy now needs its approval.
	if r := s.do(t, "PUT", "/tenants/self/approval-policy", s.mgmt, map[string]any{"required": 0}); r.status != http.StatusAccepted {
		t.Errorf("removing the policy: %d %s, want 202", r.status, r.body)
	}
}

// TestApprovalsBulkDetokenizeOverHTTP: with detokenize_over 1, POST
// /detokenize of 2 tokens answers 202 (no data); approved, the same body
// with SVC-APPROVAL-ID answers the data, once (then 409).
func TestApprovalsBulkDetokenizeOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, reader := s.app(t, map[string]any{"name": "reader", "type": "private", "rules": []map[string]any{
		{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	var ids []string
	for _, n := range []string{"4242424242424242", "5555555555554444"} {
		r := s.do(t, "POST", "/tokens", reader, map[string]any{"type": "card", "data": map[string]any{"number": n, "expiration_month": 12, "expiration_year": 2031}})
		wantStatus(t, "POST /tokens", r, http.StatusCreated)
		var tok struct{ ID string }
		r.json(t, &tok)
		ids = append(ids, tok.ID)
	}
	approverID, approver := s.app(t, map[string]any{"name": "approver", "type": "management", "permissions": []string{"tenant:read"}})
	r := s.do(t, "PUT", "/tenants/self/approval-policy", s.mgmt, map[string]any{"required": 1, "approvers": []string{approverID},
		"operations": []string{"token.detokenize_bulk"}, "detokenize_over": 1})
	wantStatus(t, "PUT approval-policy", r, http.StatusOK)
	body := map[string]any{"a": "{{ " + ids[0] + " }}", "b": "{{ " + ids[1] + " }}"}
	r = s.do(t, "POST", "/detokenize", reader, body)
	wantStatus(t, "POST /detokenize of 2 tokens", r, http.StatusAccepted)
	var c tokenvault.PendingChange
	if r.json(t, &c); c.Operation != "token.detokenize_bulk" || strings.Contains(string(r.body), "4242424242424242") {
		t.Fatalf("202 body %s", r.body)
	}
	r = s.do(t, "POST", "/approvals/"+c.ID+"/approve", approver, nil)
	wantStatus(t, "approve", r, http.StatusOK)
	r = s.do(t, "POST", "/detokenize", reader, body, httpapi.ApprovalIDHeader, c.ID)
	wantStatus(t, "POST /detokenize with the approval", r, http.StatusOK)
	if !strings.Contains(string(r.body), "4242424242424242") {
		t.Errorf("approved detokenization = %s, want the data", r.body)
	}
	r = s.do(t, "POST", "/detokenize", reader, body, httpapi.ApprovalIDHeader, c.ID)
	wantStatus(t, "POST /detokenize with a used approval", r, http.StatusConflict)
}

// TestDeleteOwnTenantOverHTTP: with tenant.delete held, DELETE
// /tenants/self answers 202 and deletes nothing; approved, the same key
// with SVC-APPROVAL-ID deletes the tenant (204), and its keys answer 401.
func TestDeleteOwnTenantOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	approverID, approver := s.app(t, map[string]any{"name": "approver", "type": "management", "permissions": []string{"tenant:read"}})
	r := s.do(t, "PUT", "/tenants/self/approval-policy", s.mgmt, map[string]any{"required": 1, "approvers": []string{approverID},
		"operations": []string{"tenant.delete"}})
	wantStatus(t, "PUT approval-policy", r, http.StatusOK)
	r = s.do(t, "DELETE", "/tenants/self", s.mgmt, nil)
	wantStatus(t, "DELETE /tenants/self", r, http.StatusAccepted)
	var c tokenvault.PendingChange
	if r.json(t, &c); c.Operation != "tenant.delete" {
		t.Fatalf("202 body %s", r.body)
	}
	wantStatus(t, "GET /tenants/self while held", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
	wantStatus(t, "approve", s.do(t, "POST", "/approvals/"+c.ID+"/approve", approver, nil), http.StatusOK)
	wantStatus(t, "DELETE /tenants/self with the approval by another key",
		s.do(t, "DELETE", "/tenants/self", approver, nil, httpapi.ApprovalIDHeader, c.ID), http.StatusForbidden)
	wantStatus(t, "DELETE /tenants/self with the approval",
		s.do(t, "DELETE", "/tenants/self", s.mgmt, nil, httpapi.ApprovalIDHeader, c.ID), http.StatusNoContent)
	wantStatus(t, "GET /tenants/self after", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusUnauthorized)
}
