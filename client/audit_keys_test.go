package client_test

import (
	"context"
	"crypto/rand"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestAuditChainThroughClient: the client's AuditKeys, RotateAuditKey and
// SignAuditChain answer what the Vault does in process: the published
// keys, a new key in use with the old one retired, and checkpoints that
// verify with them; an unknown tenant is NotFound, a tenant key on the
// operator routes Unauthenticated.
func TestAuditChainThroughClient(t *testing.T) {
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	const opKey = tokenvault.Credential("op_client-audit-operator-key-0123")
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{OperatorKey: string(opKey)}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, nil)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}

	keys, err := c.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inProcess, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inProcess, keys); diff != "" || len(keys) != 1 {
		t.Fatalf("AuditKeys through the client (-in process +client):\n%s", diff)
	}
	cp, err := c.SignAuditChain(ctx, opKey, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.VerifySignature(keys[0].Key); err != nil || cp.KeyID != keys[0].ID {
		t.Fatalf("checkpoint %+v does not verify with key %s: %v", cp, keys[0].ID, err)
	}
	again, err := v.SignAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(again, cp); diff != "" {
		t.Errorf("the checkpoint through the client is not the Vault's (-in process +client):\n%s", diff)
	}

	next, err := c.RotateAuditKey(ctx, opKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err = c.AuditKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].RetiredAt == nil || keys[1].ID != next.ID || keys[1].RetiredAt != nil {
		t.Fatalf("AuditKeys after the rotation = %+v, %v; want the old key retired, then %s", keys, err, next.ID)
	}
	cp2, err := c.SignAuditChain(ctx, opKey, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp2.VerifySignature(next.Key); err != nil || cp2.Seq != cp.Seq+1 {
		t.Errorf("checkpoint after the rotation %+v (seq %d, want %d: the rotation's line): %v", cp2, cp2.Seq, cp.Seq+1, err)
	}
	if err := cp.VerifySignature(keys[0].Key); err != nil {
		t.Errorf("the first checkpoint no longer verifies with the retired key: %v", err)
	}

	_, err = c.SignAuditChain(ctx, opKey, "01b8e094-9888-7000-8000-000000000000")
	if tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("SignAuditChain of an unknown tenant = %v, want NotFound", err)
	}
	_, err = c.RotateAuditKey(ctx, boot.Application.Key)
	if tokenvault.ErrorKind(err) != tokenvault.Unauthenticated {
		t.Errorf("RotateAuditKey with a tenant key = %v, want Unauthenticated", err)
	}
}
