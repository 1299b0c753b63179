package tokenvault_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
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

// TestSignAuditChainCoversAppendedReads: a checkpoint signed right after
// reads covers their lines, also where the store took them as appends
// (bbolt), which SignAuditChain chains first.
func TestSignAuditChainCoversAppendedReads(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		tid := e.boot.Tenant.ID
		app := e.app(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		tok, err := e.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := e.v.GetToken(ctx, app.Key, tok.ID); err != nil { // appended on bbolt
				t.Fatal(err)
			}
		}
		c, err := e.v.SignAuditChain(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.v.VerifyAuditChain(ctx, tid)
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
func readLines(t *testing.T, e *env, n int) {
	t.Helper()
	for range n {
		if _, err := e.v.GetTenant(ctx, e.mgmt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpointEveryNLines: the linker's batch that brings a tenant's
// unsigned lines to CheckpointEvery signs its head (the checkpoint is
// dated then, not when asked for later), and one line short of it signs
// nothing.
func TestCheckpointEveryNLines(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run("store="+sk.name, func(t *testing.T) {
			e := newEnvOn(t, sk.open(t), func(o *tokenvault.Options) {
				o.AuditChain = tokenvault.AuditChainOptions{CheckpointEvery: 5, CheckpointInterval: -1}
			})
			tid := e.boot.Tenant.ID
			base, err := e.v.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			signedAt := e.clock.Now()
			readLines(t, e, 5)
			if err := tokenvault.LinkNow(ctx, e.v); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Hour)
			c, err := e.v.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq != base.Seq+5 || !c.CreatedAt.Equal(signedAt) {
				t.Fatalf("after 5 lines the last checkpoint = seq %d at %v; want seq %d signed at %v, by the fifth line's link",
					c.Seq, c.CreatedAt, base.Seq+5, signedAt)
			}
			verifies(t, e.v, c)
			readLines(t, e, 4)
			now := e.clock.Now()
			c, err = e.v.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq != base.Seq+9 || !c.CreatedAt.Equal(now) {
				t.Errorf("after 4 more lines SignAuditChain = seq %d at %v; want seq %d signed now (%v): none was due", c.Seq, c.CreatedAt, base.Seq+9, now)
			}
			verifies(t, e.v, c)
		})
	}
}

// TestAuditKeyRotationInEveryChain: after RotateAuditKey, each tenant's
// next checkpoint is signed with the new key and preceded by a line of
// its own log naming both keys (actor system, entity the tenant,
// operation update); the old key stays published, retired, and its
// checkpoints still verify.
func TestAuditKeyRotationInEveryChain(t *testing.T) {
	e := newEnv(t)
	other := e.tenant(t, "Globex")
	tenants := []*tokenvault.TenantBootstrap{e.boot, other}
	var before []*auditchain.Checkpoint
	for _, b := range tenants {
		c, err := e.v.SignAuditChain(ctx, b.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, c)
	}
	oldID := before[0].KeyID
	next, err := e.v.RotateAuditKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.v.AuditKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].ID != oldID || keys[0].RetiredAt == nil || keys[1].ID != next.ID || keys[1].RetiredAt != nil {
		t.Fatalf("AuditKeys after the rotation = %+v, %v", keys, err)
	}
	for i, b := range tenants {
		if _, err := e.v.GetTenant(ctx, b.Application.Key); err != nil {
			t.Fatal(err)
		}
		c, err := e.v.SignAuditChain(ctx, b.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.KeyID != next.ID || c.Seq != before[i].Seq+2 {
			t.Errorf("tenant %s: checkpoint after the rotation = key %s seq %d; want key %s seq %d (its read, the rotation's line)",
				b.Tenant.Name, c.KeyID, c.Seq, next.ID, before[i].Seq+2)
		}
		verifies(t, e.v, c)
		verifies(t, e.v, before[i])
		logs, err := e.v.ListLogs(ctx, b.Application.Key, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant, EntityID: b.Tenant.ID})
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
	clock := newClock()
	open := func(key []byte) (*tokenvault.Vault, error) {
		return tokenvault.Open(ctx, tokenvault.Options{Path: path, Now: clock.Now, Keys: tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	}
	k1, k2 := newMasterKey(), newMasterKey()
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
	key := newMasterKey()
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
	hsm := newAESWrapper(t)
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
