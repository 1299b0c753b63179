package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"filippo.io/age"
	"github.com/tokenvault/tokenvault"
)

// exportRecipient is the public key of a new age identity.
func exportRecipient(t *testing.T) string {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.Recipient().String()
}

// TestExportTokensParity: the client's ExportTokens writes a file that
// decrypts to what the Vault exports in process, with the same manifest
// fields; a key without token:export is refused alike; an export held to
// approval is an *ApprovalRequired, run once approved.
func TestExportTokensParity(t *testing.T) {
	p := newParity(t)
	ctx := context.Background()
	if _, err := p.v.CreateToken(ctx, p.user, tokenvault.TokenRequest{Type: "token", Data: "carol@example.com"}); err != nil {
		t.Fatal(err)
	}
	id, _ := age.GenerateX25519Identity()
	req := tokenvault.ExportRequest{Recipient: id.Recipient().String()}
	var inProcess, overHTTP bytes.Buffer
	m1, err := p.v.ExportTokens(ctx, p.mgmt, req, &inProcess)
	if err != nil {
		t.Fatal(err)
	}
	var started string
	req.OnStart = func(id string) { started = id }
	m2, err := p.c.ExportTokens(ctx, p.mgmt, req, &overHTTP)
	if err != nil || m2.ID != started || m2.Count != m1.Count || m2.PlaintextSHA256 != m1.PlaintextSHA256 {
		t.Fatalf("client ExportTokens = %+v, %v (started %q); want the in-process manifest's count and plaintext %+v", m2, err, started, m1)
	}
	keys, err := p.c.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tokenvault.VerifyExport(m2, keys, &overHTTP, id); err != nil || v.Count != 1 {
		t.Fatalf("VerifyExport = %+v, %v", v, err)
	}
	req.OnStart = nil
	for _, e := range []tokenvault.TokenExporter{p.v, p.c} {
		if _, err := e.ExportTokens(ctx, p.user, req, io.Discard); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Errorf("%T.ExportTokens with a private key = %v, want PermissionDenied", e, err)
		}
	}
	ap, err := p.v.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "ap", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.v.SetApprovalPolicy(ctx, p.mgmt, tokenvault.ApprovalPolicy{Required: 1, Approvers: []string{ap.ID},
		Operations: []string{tokenvault.ApprovalExport}}); err != nil {
		t.Fatal(err)
	}
	_, err = p.c.ExportTokens(ctx, p.mgmt, req, io.Discard)
	var ar *tokenvault.ApprovalRequired
	if !errors.As(err, &ar) {
		t.Fatalf("held client ExportTokens = %v, want *ApprovalRequired", err)
	}
	if _, err := p.c.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
		t.Fatal(err)
	}
	if m, err := p.c.ExportTokensApproved(ctx, p.mgmt, ar.Change.ID, req, io.Discard); err != nil || m.ApprovalID != ar.Change.ID {
		t.Fatalf("ExportTokensApproved = %+v, %v", m, err)
	}
}
