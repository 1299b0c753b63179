// Package recordfix holds what the records' unit tests (package records)
// and the Vault-level record tests (internal/records/behaviour) both build
// on: the fixed application of testdata/records/application-v1.bin and
// application-v0.json, the ids and time the fixtures use, and the JSON an
// application record was stored in before format version 1. It is
// imported by tests only; a test package cannot import another's test
// files, so what both need is here, once.
package recordfix

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The ids the fixtures of testdata/records use.
const (
	Tenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	Token  = "0190f5a2-9000-7000-8000-000000000001"
	Actor  = "0190f5a2-8c1e-7b3a-9d4e-000000000002"
	App    = "0190f5a2-9000-7000-8000-000000000005"
)

// Time is the creation time of every fixture, with nanoseconds, so that a
// format that drops them fails.
var Time = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// AppKey is the store key of the fixed application.
var AppKey = barrier.Tenant(Tenant).Record(unit.EntityApplication, App)

// Application is the record of testdata/records/application-v0.json and
// application-v1.bin: an application with every stored field set (its
// record has no field for the key: only the key's hash is stored).
// Applications' rules name a container and sessions' carry conditions;
// the record holds both.
func Application() *access.ApplicationRecord {
	exp := Time.Add(30 * 24 * time.Hour)
	mod := Time.Add(time.Hour)
	return &access.ApplicationRecord{
		ID: App, TenantID: Tenant, Name: "Checkout backend", Type: access.Private,
		Permissions: []string{access.PermTokenCreate, access.PermTokenRead},
		Rules: []access.Rule{
			{Description: "cards, masked", Priority: 1, Container: "/pci/",
				Transform: access.TransformMask, Permissions: []string{access.PermTokenRead, access.PermTokenUse}},
			{Priority: 2, Container: "/general/high/", Transform: access.TransformReveal,
				Conditions: []access.Condition{
					{Attribute: "id", Operator: access.OperatorEquals, Value: Token},
					{Attribute: "container", Operator: access.OperatorStartsWith, Value: "/general/"},
				},
				Permissions: []string{access.PermTokenRead}},
		},
		ExpiresAt: &exp,
		CreatedBy: Actor, CreatedAt: Time,
		ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod,
		KeyHash: []byte{0x5e, 0x88, 0x48, 0x98, 0xda, 0x28, 0x04, 0x71, 0x51, 0xd0, 0xe5, 0x6f, 0x8d, 0xc6, 0x29, 0x27,
			0x73, 0x60, 0x3d, 0x0d, 0x6a, 0xab, 0xbd, 0xd6, 0x2a, 0x11, 0xef, 0x72, 0x1d, 0x15, 0x42, 0xd8},
	}
}

// PublicApplication is the record of
// testdata/records/application-public-v1.bin: Application made public,
// with allowed origins (flag 4 of format version 1), which
// application-v0.json cannot hold.
func PublicApplication() *access.ApplicationRecord {
	r := Application()
	r.Name, r.Type = "Checkout page", access.Public
	r.Permissions = []string{access.PermTokenCreate, access.PermTokenIntentCreate}
	r.AllowedOrigins = []string{"https://shop.example", "http://127.0.0.1:8081", "https://[::1]:8443"}
	return r
}

// PurposeApplication is the record of
// testdata/records/application-purposes-v1.bin: Application with
// purposes of access on its first rule (flag 8 of format version 1),
// which application-v0.json cannot hold.
func PurposeApplication() *access.ApplicationRecord {
	r := Application()
	r.Rules[0].Purposes = []string{"fraud-review", "chargeback"}
	return r
}

// FrozenApplication is the record of
// testdata/records/application-frozen-v1.bin: Application with a reveal
// budget, frozen by the circuit breaker.
func FrozenApplication() *access.ApplicationRecord {
	r := Application()
	r.RevealBudget = &access.RevealBudget{Tokens: 250, Window: "1h0m0s", Action: access.BudgetRefuse, Freeze: true}
	r.Frozen = &access.Freeze{At: Time.Add(2 * time.Hour), Reason: access.FrozenBudget}
	return r
}

// ApplicationV0 is r as the code before format version 1 stored it: the
// Vault only reads that form, and a test writes it to build a store as
// that code left it.
func ApplicationV0(r *access.ApplicationRecord) access.ApplicationRecordV0 {
	v := access.ApplicationRecordV0{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Type: string(r.Type),
		Permissions: r.Permissions, ExpiresAt: r.ExpiresAt, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt, KeyHash: r.KeyHash, Rules: []access.RuleV0{}}
	for _, x := range r.Rules {
		rule := access.RuleV0{Description: x.Description, Priority: x.Priority, Container: x.Container,
			Transform: x.Transform, Permissions: x.Permissions}
		for _, c := range x.Conditions {
			rule.Conditions = append(rule.Conditions, access.ConditionV0(c))
		}
		v.Rules = append(v.Rules, rule)
	}
	return v
}
