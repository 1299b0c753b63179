package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestExportOverHTTP: POST /tokens/export streams the age file with the
// export's id in a header; GET /exports/{id} returns the signed manifest,
// which verifies against the file with GET /audit/keys. A bad recipient
// is a 400 problem, a key without token:export a 403, and an export the
// approval policy holds a 202, run once approved with SVC-APPROVAL-ID.
func TestExportOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "private", "permissions": []string{"token:create"}})
	for _, data := range []string{"alpha@example.com", "beta@example.com"} {
		wantStatus(t, "POST /tokens", s.do(t, "POST", "/tokens", creator, map[string]any{"type": "token", "data": data}), 201)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	_, exporter := s.app(t, map[string]any{"name": "x", "type": "management", "permissions": []string{"token:export"}})
	body := map[string]any{"recipient": id.Recipient().String()}

	r := s.do(t, "POST", "/tokens/export", exporter, body)
	wantStatus(t, "POST /tokens/export", r, 200)
	exportID := r.header.Get(httpapi.ExportIDHeader)
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" || exportID == "" || bytes.Contains(r.body, []byte("alpha")) {
		t.Fatalf("answer: Content-Type %q, export id %q; want an age stream with its id", ct, exportID)
	}
	plain, err := age.Decrypt(bytes.NewReader(r.body), id)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(plain); strings.Count(string(b), "\n") != 2 || !strings.Contains(string(b), `"data":"alpha@example.com"`) {
		t.Fatalf("decrypted: %s; want the two tokens", b)
	}
	mr := s.do(t, "GET", "/exports/"+exportID, exporter, nil)
	wantStatus(t, "GET /exports/{id}", mr, 200)
	var m tokenvault.ExportManifest
	mr.json(t, &m)
	kr := s.do(t, "GET", "/audit/keys", s.mgmt, nil)
	wantStatus(t, "GET /audit/keys", kr, 200)
	var keys struct {
		Keys []auditchain.PublicKey `json:"keys"`
	}
	kr.json(t, &keys)
	if v, err := tokenvault.VerifyExport(&m, keys.Keys, bytes.NewReader(r.body), id); err != nil || v.Count != 2 || m.ID != exportID {
		t.Fatalf("VerifyExport of the HTTP export = %+v, %v", v, err)
	}

	bad := s.do(t, "POST", "/tokens/export", exporter, map[string]any{"recipient": id.String()})
	wantStatus(t, "POST /tokens/export with a private key as recipient", bad, 400)
	if p := bad.problem(t); p.Errors["recipient"] == nil || strings.Contains(string(bad.body), "AGE-SECRET") {
		t.Errorf("problem %+v: want it to name recipient, never repeat the key", p)
	}
	_, reader := s.app(t, map[string]any{"name": "r", "type": "private", "permissions": []string{"token:read"}})
	denied := s.do(t, "POST", "/tokens/export", reader, body)
	wantStatus(t, "POST /tokens/export with a private key", denied, 403)
	denied.problem(t)
	wantStatus(t, "GET /exports/{id} of no export", s.do(t, "GET", "/exports/0190f5a2-9000-7000-8000-0000000000ff", exporter, nil), 404)

	// Held to approval.
	apID, apKey := s.app(t, map[string]any{"name": "ap", "type": "management", "permissions": []string{"tenant:read"}})
	wantStatus(t, "PUT /tenants/self/approval-policy", s.do(t, "PUT", "/tenants/self/approval-policy", s.mgmt,
		map[string]any{"required": 1, "approvers": []string{apID}, "operations": []string{"token.export"}}), 200)
	held := s.do(t, "POST", "/tokens/export", exporter, body)
	wantStatus(t, "held POST /tokens/export", held, 202)
	var change tokenvault.PendingChange
	held.json(t, &change)
	wantStatus(t, "approve", s.do(t, "POST", "/approvals/"+change.ID+"/approve", apKey, nil), 200)
	again := s.do(t, "POST", "/tokens/export", exporter, body, httpapi.ApprovalIDHeader, change.ID)
	wantStatus(t, "approved POST /tokens/export", again, 200)
	if _, err := age.Decrypt(bytes.NewReader(again.body), id); err != nil || again.header.Get(httpapi.ExportIDHeader) == "" {
		t.Fatalf("approved export: %v", err)
	}
	wantStatus(t, "a second use", s.do(t, "POST", "/tokens/export", exporter, body, httpapi.ApprovalIDHeader, change.ID), 409)
}

// TestExportCutOffOverHTTP: an export that fails once streaming has begun
// (here: the client goes away) leaves no manifest, so GET /exports/{id}
// is 404, and the failure is in the audit log.
func TestExportCutOffOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "private", "permissions": []string{"token:create"}})
	big := strings.Repeat("x", 60000)
	for range 40 { // a few MB: more than the connection buffers
		wantStatus(t, "POST /tokens", s.do(t, "POST", "/tokens", creator, map[string]any{"type": "token", "data": big}), 201)
	}
	id, _ := age.GenerateX25519Identity()
	_, exporter := s.app(t, map[string]any{"name": "x", "type": "management", "permissions": []string{"token:export", "log:read"}})
	b, _ := json.Marshal(map[string]any{"recipient": id.Recipient().String()})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.srv.URL+"/vault/tokens/export", bytes.NewReader(b))
	req.Header.Set(httpapi.APIKeyHeader, exporter)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	exportID := resp.Header.Get(httpapi.ExportIDHeader)
	io.ReadFull(resp.Body, make([]byte, 1000))
	cancel()
	resp.Body.Close()
	if exportID == "" {
		t.Fatalf("no export id: status %d", resp.StatusCode)
	}
	// The server notices the client gone when a write fails: poll.
	var logs []tokenvault.Log
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r := s.do(t, "GET", "/logs?entity_type=export&entity_id="+exportID, exporter, nil)
		var page struct {
			Data []tokenvault.Log `json:"data"`
		}
		r.json(t, &page)
		if logs = page.Data; len(logs) > 0 {
			break
		}
	}
	if len(logs) != 1 || !strings.Contains(logs[0].Message, "failed") {
		t.Fatalf("audit lines of the cut export = %+v, want its failure", logs)
	}
	wantStatus(t, "GET /exports/{id} of a cut export", s.do(t, "GET", "/exports/"+exportID, exporter, nil), 404)
}

// TestExportOutlivesWriteTimeout: an export streams past the server's
// WriteTimeout (here 1 ns), each write moving the deadline on.
func TestExportOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master := make([]byte, 32)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(httpapi.New(v, httpapi.Options{}))
	srv.Config.WriteTimeout = time.Nanosecond
	srv.Start()
	defer srv.Close()
	id, _ := age.GenerateX25519Identity()
	b, _ := json.Marshal(map[string]any{"recipient": id.Recipient().String()})
	req, _ := http.NewRequest("POST", srv.URL+"/tokens/export", bytes.NewReader(b))
	req.Header.Set(httpapi.APIKeyHeader, string(boot.Application.Key))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /tokens/export with a 1ns WriteTimeout: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || !bytes.HasPrefix(body, []byte("age-encryption.org/v1")) {
		t.Fatalf("POST /tokens/export with a 1ns WriteTimeout = %d, %d bytes, %v", res.StatusCode, len(body), err)
	}
}
