package tokenvault

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The JSON every stored kind but tokens, applications and log lines was
// written in before it had a record format of its own (format version 0),
// produced by that code: the value the Vault passed to putRecord (or
// putPlain), json.Marshal'ed. TOKENVAULT_UPDATE_RECORDS=1 wrote these
// files once, with the code of before; they never change again.

const (
	fixProxy      = "0190f5a2-9000-7000-8000-000000000011"
	fixInvitation = "0190f5a2-9000-7000-8000-000000000012"
	fixMember     = "0190f5a2-9000-7000-8000-000000000013"
	fixFormula    = "0190f5a2-9000-7000-8000-000000000014"
	fixReactor    = "0190f5a2-9000-7000-8000-000000000015"
	fixSession    = "0190f5a2-9000-7000-8000-000000000016"
)

// fixKeyHash is a keyed hash as the records hold them (32 bytes).
var fixKeyHash = []byte{0x5e, 0x88, 0x48, 0x98, 0xda, 0x28, 0x04, 0x71, 0x51, 0xd0, 0xe5, 0x6f, 0x8d, 0xc6, 0x29, 0x27,
	0x73, 0x60, 0x3d, 0x0d, 0x6a, 0xab, 0xbd, 0xd6, 0x2a, 0x11, 0xef, 0x72, 0x1d, 0x15, 0x42, 0xd8}

func TestRecordKindsV0Fixtures(t *testing.T) {
	mod := fixTime.Add(time.Hour)
	exp := fixTime.Add(72 * time.Hour)
	auth := fixTime.Add(time.Minute)
	rules := []AccessRule{{Description: "cards", Priority: 1, Transform: TransformMask,
		Permissions: []string{PermTokenRead},
		Conditions:  []Condition{{Attribute: "container", Operator: OperatorStartsWith, Value: "/pci/"}}}}
	for _, tc := range []struct {
		file string
		v    any
	}{
		{"proxy-v0.json", proxyRecord{Proxy: Proxy{
			ID: fixProxy, TenantID: fixTenant, Name: "Payments", Key: "pxy_0123456789abcdef",
			DestinationURL:    "https://api.example.com/charge",
			RequestTransform:  &ProxyTransform{Code: "module.exports = async function (req) { return req }"},
			ResponseTransform: &ProxyTransform{Code: "module.exports = async function (res) { return res }"},
			Application:       &Ref{ID: fixApp}, ApplicationID: fixApp,
			Configuration: map[string]any{"region": "eu", "retries": 3.0, "live": true},
			RequireAuth:   true, CreatedBy: fixActor, CreatedAt: fixTime,
			ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod,
		}, KeyHash: fixKeyHash}},
		{"invitation-v0.json", invitationRecord{Invitation: Invitation{
			ID: fixInvitation, TenantID: fixTenant, Email: "ada@example.com", Status: InvitationPending,
			ExpiresAt: exp, CreatedBy: fixActor, CreatedAt: fixTime,
			ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod,
		}, TokenHash: fixKeyHash}},
		{"tenant-v0.json", Tenant{ID: fixTenant, Name: "Acme", OwnerID: fixMember, CreatedBy: fixActor,
			CreatedAt: fixTime, ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod}},
		{"member-v0.json", TenantMember{ID: fixMember, TenantID: fixTenant, Role: RoleOwner,
			User: User{ID: fixActor, Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace",
				Picture: "https://example.com/ada.png"}, CreatedAt: fixTime}},
		{"formula-v0.json", Formula{ID: fixFormula, TenantID: fixTenant, Name: "Charge", Description: "charges a card",
			Type: "private", Code: "module.exports = async function (req) { return {raw: req.args} }",
			Configuration: []ConfigurationDeclaration{{Name: "API_KEY", Description: "the key", Type: "string"}},
			RequestParameters: []RequestParameter{{Name: "card.number", Description: "the card", Type: "string"},
				{Name: "amount", Type: "number", Optional: true}},
			CreatedBy: fixActor, CreatedAt: fixTime, ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod}},
		{"reactor-v0.json", reactorRecord{ID: fixReactor, TenantID: fixTenant, Name: "Charger", FormulaID: fixFormula,
			Code:          "module.exports = async function (req) { return {raw: 1} }",
			Configuration: map[string]any{"API_KEY": "k", "nested": map[string]any{"a": []any{1.0, "b", nil}}},
			ApplicationID: fixApp, CreatedBy: fixActor, CreatedAt: fixTime,
			ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod}},
		{"session-v0.json", sessionRecord{ID: fixSession, TenantID: fixTenant, ApplicationID: fixApp,
			KeyHash: fixKeyHash, NonceHash: fixKeyHash[:16], CreatedAt: fixTime, ExpiresAt: exp,
			PendingAddress: "0a1b2c3d", Authorized: true, AuthorizedBy: fixActor, AuthorizedAt: &auth,
			Grants:  grants{Permissions: []string{PermTokenRead}, Rules: rules},
			Ceiling: grants{Permissions: []string{PermTokenRead, PermTokenCreate}, Rules: []AccessRule{}}}},
		{"idempotency-v0.json", idempotencyRecord{Version: 1, Fingerprint: fixKeyHash, CreatedAt: fixTime, ExpiresAt: exp,
			Claim: "claim-1", LeaseUntil: auth,
			Response: &IdempotentResponse{Status: 201, Header: map[string][]string{"Content-Type": {"application/json"}},
				Body: []byte(`{"id":"x"}`)},
			Grants: fixKeyHash[:8]}},
		{"keyref-v0.json", keyRef{TenantID: fixTenant, Kind: EntityApplication, ID: fixApp}},
		{"count-v0.json", countRecord{N: 1234567}},
		{"cvcscan-v0.json", legacyCVCScan{Tenant: fixTenant, After: fixTokenKey.s, Done: true}},
		{"lists-v0.json", listBuild{Tenant: fixTenant, After: fixTokenKey.s, Done: true}},
		{"fingerprints-v0.json", fingerprintPlace{InMemory: true}},
		{"reseal-v0.json", resealState{NotBefore: fixTime, After: fixTokenKey.s}},
		{"deleting-v0.json", deletionState{Phase: deletePhaseTenant, Prefix: "sys/apikey/", After: "sys/apikey/0a1b"}},
	} {
		path := filepath.Join("testdata", "records", tc.file)
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("TOKENVAULT_UPDATE_RECORDS") == "1" {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant\n%s", tc.file, got, want)
		}
	}
}
