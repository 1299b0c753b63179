package auditlog_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
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
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tid := e.Boot.Tenant.ID
		c, err := e.V.SignAuditChain(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		if c.TenantID != tid || c.Seq == 0 || c.Final {
			t.Fatalf("checkpoint = %+v; want one of tenant %s over its lines, not final", c, tid)
		}
		verifies(t, e.V, c)
		keys, err := e.V.AuditKeys(ctx)
		if err != nil || len(keys) != 1 || keys[0].RetiredAt != nil || keys[0].Algorithm != "Ed25519" || keys[0].ID != c.KeyID {
			t.Fatalf("AuditKeys = %+v, %v; want the one key in use, which signed", keys, err)
		}
		again, err := e.V.SignAuditChain(ctx, tid)
		if err != nil || again.Seq != c.Seq || !again.CreatedAt.Equal(c.CreatedAt) || string(again.Signature) != string(c.Signature) {
			t.Errorf("SignAuditChain again = %+v, %v; want the same checkpoint", again, err)
		}
		_, err = e.V.SignAuditChain(ctx, "01b8e094-9888-7000-8000-000000000000")
		vaulttest.WantKind(t, "SignAuditChain of an unknown tenant", err, tokenvault.NotFound)
		_, err = e.V.SignAuditChain(ctx, "../x")
		vaulttest.WantKind(t, "SignAuditChain of a bad id", err, tokenvault.NotFound)
	})
}

// TestSignAuditChainCoversAppendedReads: a checkpoint signed right after
// reads covers their lines, also where the store took them as appends
// (bbolt), which SignAuditChain chains first.
func TestSignAuditChainCoversAppendedReads(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tid := e.Boot.Tenant.ID
		app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := e.V.GetToken(ctx, app.Key, tok.ID); err != nil { // appended on bbolt
				t.Fatal(err)
			}
		}
		c, err := e.V.SignAuditChain(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.V.VerifyAuditChain(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK || r.SignedThrough != r.LastSeq || c.Seq != r.LastSeq {
			t.Errorf("checkpoint at %d; chain verified %v through %d of %d: %v", c.Seq, r.OK, r.SignedThrough, r.LastSeq, r.Problems)
		}
	})
}

// readLines writes n audit lines to e's bootstrap tenant: single reads of
// the tenant, each logged.
func readLines(t *testing.T, e *vaulttest.Env, n int) {
	t.Helper()
	for range n {
		if _, err := e.V.GetTenant(ctx, e.Mgmt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpointEveryNLines: the linker's batch that brings a tenant's
// unsigned lines to CheckpointEvery signs its head (the checkpoint is
// dated then, not when asked for later), and one line short of it signs
// nothing.
func TestCheckpointEveryNLines(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) {
				o.AuditChain = tokenvault.AuditChainOptions{CheckpointEvery: 5, CheckpointInterval: -1}
			})
			tid := e.Boot.Tenant.ID
			base, err := e.V.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			signedAt := e.Clock.Now()
			readLines(t, e, 5)
			if err := vaulttest.LinkNow(ctx, e.V); err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(time.Hour)
			c, err := e.V.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq != base.Seq+5 || !c.CreatedAt.Equal(signedAt) {
				t.Fatalf("after 5 lines the last checkpoint = seq %d at %v; want seq %d signed at %v, by the fifth line's link",
					c.Seq, c.CreatedAt, base.Seq+5, signedAt)
			}
			verifies(t, e.V, c)
			readLines(t, e, 4)
			now := e.Clock.Now()
			c, err = e.V.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq != base.Seq+9 || !c.CreatedAt.Equal(now) {
				t.Errorf("after 4 more lines SignAuditChain = seq %d at %v; want seq %d signed now (%v): none was due", c.Seq, c.CreatedAt, base.Seq+9, now)
			}
			verifies(t, e.V, c)
		})
	}
}

// TestAuditKeyRotationInEveryChain: after RotateAuditKey, each tenant's
// next checkpoint is signed with the new key and preceded by a line of
// its own log naming both keys (actor system, entity the tenant,
// operation update); the old key stays published, retired, and its
// checkpoints still verify.
func TestAuditKeyRotationInEveryChain(t *testing.T) {
	e := vaulttest.NewEnv(t)
	other := e.Tenant(t, "Globex")
	tenants := []*tokenvault.TenantBootstrap{e.Boot, other}
	var before []*auditchain.Checkpoint
	for _, b := range tenants {
		c, err := e.V.SignAuditChain(ctx, b.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, c)
	}
	oldID := before[0].KeyID
	next, err := e.V.RotateAuditKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.V.AuditKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].ID != oldID || keys[0].RetiredAt == nil || keys[1].ID != next.ID || keys[1].RetiredAt != nil {
		t.Fatalf("AuditKeys after the rotation = %+v, %v", keys, err)
	}
	for i, b := range tenants {
		if _, err := e.V.GetTenant(ctx, b.Application.Key); err != nil {
			t.Fatal(err)
		}
		c, err := e.V.SignAuditChain(ctx, b.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.KeyID != next.ID || c.Seq != before[i].Seq+2 {
			t.Errorf("tenant %s: checkpoint after the rotation = key %s seq %d; want key %s seq %d (its read, the rotation's line)",
				b.Tenant.Name, c.KeyID, c.Seq, next.ID, before[i].Seq+2)
		}
		verifies(t, e.V, c)
		verifies(t, e.V, before[i])
		logs, err := e.V.ListLogs(ctx, b.Application.Key, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant, EntityID: b.Tenant.ID})
		if err != nil {
			t.Fatal(err)
		}
		want := "Audit signing key rotated from " + oldID + " to " + next.ID
		found := false
		for _, l := range logs.Data {
			if l.Message == want {
				found = l.ActorType == tokenvault.ActorSystem && l.Operation == tokenvault.OpUpdate
			}
		}
		if !found {
			t.Errorf("tenant %s: no line %q by the system, operation update, in %+v", b.Tenant.Name, want, logs.Data)
		}
	}
}

// TestAuditKeysSurviveMasterKeyRotation: the signing key is wrapped under
// the root of trust and follows it: after RotateMasterKey the store opens
// with the new master key alone, publishes the same keys, and signs with
// the same key; the old master key no longer opens it.
func TestAuditKeysSurviveMasterKeyRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	clock := vaulttest.NewClock()
	open := func(key []byte) (*tokenvault.Vault, error) {
		return tokenvault.Open(ctx, tokenvault.Options{Path: path, Now: clock.Now, Keys: tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	}
	k1, k2 := vaulttest.NewMasterKey(), vaulttest.NewMasterKey()
	v, err := open(k1)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := v.SignAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.RotateMasterKey(ctx, k2); err != nil {
		t.Fatal(err)
	}
	v.Close()
	if v, err := open(k1); err == nil {
		v.Close()
		t.Fatal("the old master key still opens the store")
	}
	v, err = open(k2)
	if err != nil {
		t.Fatalf("Open with the new master key alone: %v", err)
	}
	defer v.Close()
	again, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys, again); diff != "" {
		t.Errorf("the published keys changed with the master key (-before +after):\n%s", diff)
	}
	if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	c, err := v.SignAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyID != first.KeyID || c.Seq != first.Seq+1 {
		t.Errorf("checkpoint after the master key rotation = key %s seq %d; want key %s seq %d", c.KeyID, c.Seq, first.KeyID, first.Seq+1)
	}
	verifies(t, v, c)
	verifies(t, v, first)
}

// TestAuditKeysFollowKeyWrapperRotation: moving the store from a local
// master key to another kind of key wrapper (as to an HSM or a KMS) takes
// the signing key along: the store opens with that wrapper alone, and
// signs and publishes as before.
func TestAuditKeysFollowKeyWrapperRotation(t *testing.T) {
	s := memory.New()
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := v.SignAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	hsm := vaulttest.NewAESWrapper(t)
	if err := v.RotateKeyWrapper(ctx, hsm); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v, err = tokenvault.Open(ctx, tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{Wrapper: hsm}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatalf("Open with the new wrapper alone: %v", err)
	}
	defer v.Close()
	if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	c, err := v.SignAuditChain(ctx, boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyID != first.KeyID || c.Seq != first.Seq+1 {
		t.Errorf("checkpoint after the wrapper rotation = key %s seq %d; want key %s seq %d", c.KeyID, c.Seq, first.KeyID, first.Seq+1)
	}
	verifies(t, v, c)
}
