package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/httpapi"
)

// publishedKey is the key of id that GET /audit/keys publishes (without a
// key).
func publishedKey(t *testing.T, s *server, id string) auditchain.PublicKey {
	t.Helper()
	r := s.do(t, "GET", "/audit/keys", "", nil)
	wantStatus(t, "GET /audit/keys", r, http.StatusOK)
	var body struct {
		Keys []auditchain.PublicKey `json:"keys"`
	}
	r.json(t, &body)
	for _, k := range body.Keys {
		if k.ID == id {
			return k
		}
	}
	t.Fatalf("GET /audit/keys = %s, without key %s", r.body, id)
	return auditchain.PublicKey{}
}

// TestAuditChainOverHTTP: the operator signs a tenant's head and rotates
// the signing key over HTTP; every checkpoint verifies with the key GET
// /audit/keys publishes with no API key, the retired key included, and
// the rotation is a line of the tenant's log. Unknown tenants are 404, and
// the operator routes refuse a tenant's key.
func TestAuditChainOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey})
	tid := s.boot.Tenant.ID
	r := s.do(t, "POST", "/operator/tenants/"+tid+"/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "POST /operator/tenants/{id}/audit/checkpoints", r, http.StatusOK)
	var first auditchain.Checkpoint
	r.json(t, &first)
	if first.TenantID != tid || first.Seq == 0 {
		t.Fatalf("checkpoint = %s", r.body)
	}
	old := publishedKey(t, s, first.KeyID)
	if err := first.VerifySignature(old.Key); err != nil {
		t.Fatalf("the checkpoint does not verify with its published key: %v", err)
	}

	r = s.do(t, "POST", "/operator/audit/keys/rotate", operatorKey, nil)
	wantStatus(t, "POST /operator/audit/keys/rotate", r, http.StatusOK)
	var next auditchain.PublicKey
	r.json(t, &next)
	if next.ID == old.ID || next.RetiredAt != nil || next.Algorithm != "Ed25519" || len(next.Key) != 32 {
		t.Fatalf("the rotated key = %s", r.body)
	}
	if k := publishedKey(t, s, old.ID); k.RetiredAt == nil {
		t.Error("the old key is published without its retired_at")
	}
	// A line (a single read is logged), then the checkpoint: signed with
	// the new key, after the line that records the rotation.
	wantStatus(t, "GET /tenants/self", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
	r = s.do(t, "POST", "/operator/tenants/"+tid+"/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "POST .../audit/checkpoints after the rotation", r, http.StatusOK)
	var second auditchain.Checkpoint
	r.json(t, &second)
	if second.KeyID != next.ID || second.Seq != first.Seq+2 {
		t.Fatalf("the checkpoint after the rotation = %s; want one of key %s at seq %d (the read, the rotation)", r.body, next.ID, first.Seq+2)
	}
	if err := second.VerifySignature(publishedKey(t, s, next.ID).Key); err != nil {
		t.Errorf("the new checkpoint does not verify: %v", err)
	}
	if err := first.VerifySignature(publishedKey(t, s, old.ID).Key); err != nil {
		t.Errorf("the old checkpoint no longer verifies with the retired key: %v", err)
	}
	r = s.do(t, "GET", "/logs?entity_type=tenant", s.mgmt, nil)
	wantStatus(t, "GET /logs", r, http.StatusOK)
	if want := "Audit signing key rotated from " + old.ID + " to " + next.ID; !strings.Contains(string(r.body), want) {
		t.Errorf("the tenant's log does not record the rotation (%q):\n%s", want, r.body)
	}

	r = s.do(t, "POST", "/operator/tenants/01b8e094-9888-7000-8000-000000000000/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "checkpoint of an unknown tenant", r, http.StatusNotFound)
	for _, path := range []string{"/operator/audit/keys/rotate", "/operator/tenants/" + tid + "/audit/checkpoints"} {
		r = s.do(t, "POST", path, s.mgmt, nil)
		wantStatus(t, "POST "+path+" with a tenant key", r, http.StatusUnauthorized)
	}
	var p struct {
		Status int `json:"status"`
	}
	r = s.do(t, "POST", "/operator/tenants/not-an-id/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "checkpoint of a malformed tenant id", r, http.StatusNotFound)
	if r.json(t, &p); p.Status != http.StatusNotFound || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("the 404 is not a problem: %s %s", r.header.Get("Content-Type"), r.body)
	}
}

// TestCheckpointEveryNLinesOverHTTP: lines written over HTTP are signed
// every CheckpointEvery lines by the commit of the last one: the operator
// route then answers that checkpoint, dated when the line was written.
func TestCheckpointEveryNLinesOverHTTP(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) {
		o.Now = clock
		o.AuditChain = tokenvault.AuditChainOptions{CheckpointEvery: 3, CheckpointInterval: -1}
	})
	tid := s.boot.Tenant.ID
	r := s.do(t, "POST", "/operator/tenants/"+tid+"/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "POST .../audit/checkpoints", r, http.StatusOK)
	var base auditchain.Checkpoint
	r.json(t, &base)
	written := clock()
	for range 3 {
		wantStatus(t, "GET /tenants/self", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
	}
	s.settleChain(t) // the linker links the three lines, and signs, now
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	r = s.do(t, "POST", "/operator/tenants/"+tid+"/audit/checkpoints", operatorKey, nil)
	wantStatus(t, "POST .../audit/checkpoints after 3 lines", r, http.StatusOK)
	var c auditchain.Checkpoint
	r.json(t, &c)
	if c.Seq != base.Seq+3 || !c.CreatedAt.Equal(written) {
		t.Fatalf("checkpoint = %s; want seq %d signed at %v when the third line was linked", r.body, base.Seq+3, written)
	}
	if err := c.VerifySignature(publishedKey(t, s, c.KeyID).Key); err != nil {
		t.Error(err)
	}
}
