package barrier

import (
	"testing"
	"time"
)

// TestKeysCarryTenantAndAuth: the constructors give each key the keyring
// that seals it and whether writing it voids the auth cache, as the string
// parsing they replace (tenantOf, touchesAuth) did.
func TestKeysCarryTenantAndAuth(t *testing.T) {
	const tid = "01b8e094-9888-71b6-bf33-62de66008101"
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	mac := []byte{0xab, 0xcd}
	for _, tc := range []struct {
		key    Key
		s      string
		tenant string
		auth   bool
	}{
		{Tenant(tid).Record(KindApplication, "a"), "tenant/" + tid + "/application/a", tid, true},
		{Tenant(tid).Record(KindSession, "s"), "tenant/" + tid + "/session/s", tid, true},
		{Tenant(tid).Record("token", "t"), "tenant/" + tid + "/token/t", tid, false},
		{Tenant(tid).Record("tenant", tid), "tenant/" + tid + "/tenant/" + tid, tid, false},
		{Tenant(tid).Logs().Key("x/y"), "tenant/" + tid + "/log/x/y", tid, false},
		{Tenant(tid).Index("fp").Key("f/t"), "tenant/" + tid + "/idx/fp/f/t", tid, false},
		{Tenant(tid).CapEntries(PendingSessionCaps, "a", "", at, "s")[0], "tenant/" + tid + "/idx/pending-session/a/" + TimeKey(at) + "/s", tid, false},
		{Tenant(tid).All().Key("session/s"), "tenant/" + tid + "/session/s", tid, true},
		{Tenant(tid).Keyring(), "tenant/" + tid + "/keyring", "", false},
		{APIKeyLookup(mac), "sys/apikey/abcd", "", true},
		{NonceLookup(mac), "sys/nonce/abcd", "", false},
		{InviteLookup(mac), "sys/invite/abcd", "", false},
		{ProxyLookup(mac), "sys/proxy/abcd", "", false},
		{OfficialFormula("f"), "sys/formula/f", "", false},
		{Tenant(tid).Expiry(at, KindSession, "s"), "sys/expiry/" + TimeKey(at) + "/" + tid + "/session/s", "", false},
		{Tenant(tid).CVCDue(at, "t"), "sys/cvc/" + TimeKey(at) + "/" + tid + "/t", "", false},
		{Tenant(tid).Registry(), "sys/tenant/" + tid, "", false},
		{Tenant(tid).Reseal(), "sys/reseal/" + tid, "", false},
		{Tenant(tid).Deleting(), "sys/deleting/" + tid, "", false},
		{Tenant(tid).FinalCheckpoint(), "sys/chain-final/" + tid, "", false},
		{FinalCheckpoint(tid), "sys/chain-final/" + tid, "", false},
		{Tenant(tid).UnsignedChain(TimeKey(at)), "sys/chain-unsigned/" + TimeKey(at) + "/" + tid, "", false},
		{Tenant(tid).Checkpoint(10), "tenant/" + tid + "/chain_checkpoint/000000000000000a", tid, false},
		{AuditKey("0123456789abcdef"), "sys/audit-key/0123456789abcdef", "", false},
		{SysKeyring, "sys/keyring", "", false},
		{SysCVCScan, "sys/cvcscan", "", false},
		{SysLists, "sys/lists", "", false},
		{SysTenantCount, "sys/count/tenants", "", false},
		{SysShapeLists, "sys/lists-shapes", "", false},
		{Tenant(tid).TokenShapeList("ab").Key("p"), "tenant/" + tid + "/idx/tl-s/abp", tid, false},
		{Tenant(tid).TokenShapeCount("ab"), "tenant/" + tid + "/count/tok-s/ab", tid, false},
		{Tenant(tid).TokenShape("ab"), "tenant/" + tid + "/token_shape/ab", tid, false},
		{Tenant(tid).TokenOverflowMark("ab"), "tenant/" + tid + "/idx/tlo/ab", tid, false},
		{Tenant(tid).LegacyTokenLists()[1].Key("ab"), "tenant/" + tid + "/idx/tl-c/ab", tid, false},
		{Tenant(tid).LegacyTokenLists()[3].Key("ab"), "tenant/" + tid + "/count/tok-c/ab", tid, false},
		{Tenant(tid).Count(KindApplication), "tenant/" + tid + "/count/application", tid, false},
		{Tenant(tid).CursorSeal(), "tenant/" + tid + "/cursor", tid, false},
		{Tenant(tid).FingerprintIndex("f").Key("t"), "tenant/" + tid + "/idx/fp/f/t", tid, false},
		{Tenant(tid).SearchIndex("ab").Key("t"), "tenant/" + tid + "/idx/search/ab/t", tid, false},
		{Tenant(tid).MetadataIndex("ab").Key("t"), "tenant/" + tid + "/idx/meta/ab/t", tid, false},
		{Tenant(tid).LineIndex("card", "x").Key("p"), "tenant/" + tid + "/idx/log-e/card/x/p", tid, false},
		{Tenant(tid).LineIndex("card", tid).Key("p"), "tenant/" + tid + "/idx/log-e/card/\x00\x01\xb8\xe0\x94\x98\x88\x71\xb6\xbf\x33\x62\xde\x66\x00\x81\x01p", tid, false},
		{Tenant(tid).LogEntityIndex("card", "e").Key("s"), "tenant/" + tid + "/idx/log-entity/card/e/s", tid, false},
		{Tenant(tid).LogTypeIndex("card").Key("s"), "tenant/" + tid + "/idx/log-type/card/s", tid, false},
		{Tenant(tid).PendingLogIndex().Key("s"), "tenant/" + tid + "/idx/log-p/s", tid, false},
		{Tenant(tid).CapEntries(PendingSessionCaps, "a", "m", at, "s")[1], "tenant/" + tid + "/idx/pending-session-addr/a/m/" + TimeKey(at) + "/s", tid, false},
		{Tenant(tid).CapEntries(TokenIntentCaps, "a", "m", at, "i")[0], "tenant/" + tid + "/idx/intent-creator/a/" + TimeKey(at) + "/i", tid, false},
		{Tenant(tid).CapEntries(TokenIntentCaps, "a", "m", at, "i")[1], "tenant/" + tid + "/idx/intent-creator-addr/a/m/" + TimeKey(at) + "/i", tid, false},
		{Tenant(tid).AuditQueueEntry("sink", "0011/id"), "sys/auditq/sink/0011/" + tid + "/id", "", false},
		{AuditQueue("sink").Key("x"), "sys/auditq/sink/x", "", false},
		{Tenant(tid).WebhookDelivery("w", "d"), "tenant/" + tid + "/webhook_delivery/w/d", tid, false},
		{Tenant(tid).WebhookDue("w", at, "d"), "sys/whq/" + tid + "/w/" + TimeKey(at) + "/d", "", false},
	} {
		if tc.key.s != tc.s || tc.key.tenant != tc.tenant || tc.key.auth != tc.auth {
			t.Errorf("key %q (tenant %q, auth %v), want %q (tenant %q, auth %v)",
				tc.key.s, tc.key.tenant, tc.key.auth, tc.s, tc.tenant, tc.auth)
		}
	}
}

// TestCountedKinds: a record of a counted kind carries its kind, so that
// writing its first version or deleting it changes its tenant's count;
// other records and the count itself carry none.
func TestCountedKinds(t *testing.T) {
	tk := Tenant("t")
	for _, kind := range CountedKinds {
		if k := tk.Record(kind, "x"); k.counted != kind {
			t.Errorf("%s: counted %q, want %q", k, k.counted, kind)
		}
	}
	for _, k := range []Key{tk.Record("token", "x"), tk.Record(KindSession, "x"), tk.Count(KindApplication), tk.Logs().Key("x")} {
		if k.counted != "" {
			t.Errorf("%s: counted %q, want none", k, k.counted)
		}
	}
}
