package tokenvault_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
)

// keyOf returns the published key id among keys, failing the test when
// there is none.
func keyOf(t *testing.T, keys []auditchain.PublicKey, id string) auditchain.PublicKey {
	t.Helper()
	for _, k := range keys {
		if k.ID == id {
			return k
		}
	}
	t.Fatalf("key %s is not published among %d keys", id, len(keys))
	return auditchain.PublicKey{}
}

// verifies checks c's signature with the key AuditKeys publishes for it.
func verifies(t *testing.T, v *tokenvault.Vault, c *auditchain.Checkpoint) {
	t.Helper()
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifySignature(keyOf(t, keys, c.KeyID).Key); err != nil {
		t.Errorf("checkpoint %d of %s: %v", c.Seq, c.TenantID, err)
	}
}

// TestSignAuditChain: the operator's checkpoint covers the tenant's head,
// verifies with the published key in use, and is returned again while
// nothing new is written; an unknown tenant is NotFound.
func TestSignAuditChain(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		tid := e.boot.Tenant.ID
		c, err := e.v.SignAuditChain(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		if c.TenantID != tid || c.Seq == 0 || c.Final {
			t.Fatalf("checkpoint = %+v; want one of tenant %s over its lines, not final", c, tid)
		}
		verifies(t, e.v, c)
		keys, err := e.v.AuditKeys(ctx)
		if err != nil || len(keys) != 1 || keys[0].RetiredAt != nil || keys[0].Algorithm != "Ed25519" || keys[0].ID != c.KeyID {
			t.Fatalf("AuditKeys = %+v, %v; want the one key in use, which signed", keys, err)
		}
		again, err := e.v.SignAuditChain(ctx, tid)
		if err != nil || again.Seq != c.Seq || !again.CreatedAt.Equal(c.CreatedAt) || string(again.Signature) != string(c.Signature) {
			t.Errorf("SignAuditChain again = %+v, %v; want the same checkpoint", again, err)
		}
		_, err = e.v.SignAuditChain(ctx, "01b8e094-9888-7000-8000-000000000000")
		wantKind(t, "SignAuditChain of an unknown tenant", err, tokenvault.NotFound)
		_, err = e.v.SignAuditChain(ctx, "../x")
		wantKind(t, "SignAuditChain of a bad id", err, tokenvault.NotFound)
	})
}
