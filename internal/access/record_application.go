package access

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ApplicationRecord is an application as stored, sealed like every
// record: a type of its own, not the API's Application, so that neither
// changes the other by accident. Its fields are exactly what the stored
// form holds (below; the id and tenant are the store key's), and the
// root's applicationOf is where its shape meets Application's. It has no
// field for the key:
// only the key's keyed hash is stored, and the key is shown once, in the
// answer of create and regenerate.
type ApplicationRecord struct {
	ID          string
	TenantID    string
	Name        string
	Type        ApplicationType
	Permissions []string
	Rules       []Rule
	ExpiresAt   *time.Time
	CreatedBy   string
	CreatedAt   time.Time
	ModifiedBy  string
	ModifiedAt  *time.Time
	// KeyHash is the keyed hash of the application's key (Vault.sys.mac).
	KeyHash []byte
	// AllowedOrigins are the origins (scheme://host[:port], lower case)
	// allowed to embed the hosted elements of a public application; nil
	// for none, and for every application of another type.
	AllowedOrigins []string
	// RevealBudget is the circuit breaker's budget (breaker.go); nil for
	// none.
	RevealBudget *RevealBudget
	// Frozen is set while the application's keys are frozen; nil else.
	Frozen *Freeze
}

// Expired reports whether the application has expired at now.
func (r *ApplicationRecord) Expired(now time.Time) bool {
	return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt)
}

// The stored form of an application (ApplicationRecord), at
// tenant/<tid>/application/<id>.
//
// Format version 1 (binary; see internal/unit's codec.go for uvarint,
// varint, bytes, str, time):
//
//	0x01              format version
//	uvarint flags     1 expires_at, 2 modified_at, 4 allowed_origins
//	str   name
//	str   type
//	bytes key_hash    the keyed hash of the key (the key is never stored)
//	uvarint n, n str  permissions
//	uvarint n, n rules, each:
//	  str   description
//	  varint priority
//	  str   container
//	  uvarint n, n (str attribute, str operator, str value)   conditions
//	  str   transform
//	  uvarint n, n str  permissions
//	time  created_at
//	str   created_by
//	time  expires_at   (flag 1)
//	time  modified_at  (flag 2)
//	str   modified_by
//	uvarint n, n str  allowed_origins  (flag 4)
//	per rule, in order: uvarint n, n str  purposes  (flag 8)
//	uvarint tokens, str window, str action, uvarint freeze (0 or 1)
//	                  reveal_budget    (flag 16)
//	time at, str reason  frozen        (flag 32)
//
// Flag 4 was added within version 1 rather than as a version 2: a record
// without allowed origins (every record written before, and every
// application but a public one with origins) is byte for byte what it
// was, so no record is rewritten and application-v1.bin still holds; a
// record with the flag is refused by code older than the flag ("unknown
// flags"), as a new version would be. Flags 16 and 32 (the circuit breaker's
// budget and freeze) were added the same way, for the same reason. Nil and empty lists are both
// written without the flag and decode as nil.
//
// Flag 8 (rules' purposes, access.Rule.Purposes) was added the same way:
// set only when a rule has purposes, so every record without is as it was.
//
// The tenant and id are the store key's, not stored again. An
// application's permissions and rules, and a rule's permissions, decode
// as empty lists rather than nil (the API shows them as [], and the Vault
// never stores them nil); a rule's conditions decode as nil when there
// are none. No entry is added to recordWords for applications (that
// would be a new version of every record): their strings are literals,
// or 16 bytes for an id.
//
// Version 0 is the JSON the Vault wrote before (ApplicationRecordV0: the
// API's Application and key_hash, the tags as they were); it still reads,
// and a record in it is rewritten in version 1 on its next write and by
// the re-seal pass (the root's reseal.go).
//
// Why binary. Applications are read on authentication-cache misses and
// written rarely, so speed hardly matters here; the binary form is chosen
// because it is the least code: the primitives, golden fixtures
// (testdata/records) and FuzzRecords exist for tokens and log lines, a
// lean JSON form would need a second set of stored types with tags of
// their own and its own care for nil and empty, and one encoding for all
// records with versions is one thing to learn. The fixture application
// (internal/records/recordfix) is 281 bytes in version 1 against 886 in
// version 0.
const ApplicationFormat = 1

const (
	appExpires = 1 << iota
	appModified
	appOrigins
	appPurposes
	appBudget
	appFrozen
)

func (r *ApplicationRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if !barrier.Tenant(r.TenantID).IsRecord(key, unit.EntityApplication, r.ID) {
		return b, fmt.Errorf("application %s/%s does not belong at this key", r.TenantID, r.ID)
	}
	if err := unit.CheckRecordTimes("application", &r.CreatedAt, r.ExpiresAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.ExpiresAt != nil {
		flags |= appExpires
	}
	if r.ModifiedAt != nil {
		flags |= appModified
	}
	if len(r.AllowedOrigins) > 0 {
		flags |= appOrigins
	}
	if HasRulePurposes(r.Rules) {
		flags |= appPurposes
	}
	if r.RevealBudget != nil {
		flags |= appBudget
	}
	if r.Frozen != nil {
		flags |= appFrozen
	}
	b = append(b, ApplicationFormat)
	b = binary.AppendUvarint(b, flags)
	b = unit.AppendStr(b, r.Name)
	b = unit.AppendStr(b, string(r.Type))
	b = unit.AppendBytes(b, r.KeyHash)
	b = unit.AppendStrs(b, r.Permissions)
	b = binary.AppendUvarint(b, uint64(len(r.Rules)))
	for i := range r.Rules {
		rule := &r.Rules[i]
		b = unit.AppendStr(b, rule.Description)
		b = binary.AppendVarint(b, int64(rule.Priority))
		b = unit.AppendStr(b, rule.Container)
		b = binary.AppendUvarint(b, uint64(len(rule.Conditions)))
		for _, c := range rule.Conditions {
			b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, c.Attribute), c.Operator), c.Value)
		}
		b = unit.AppendStr(b, rule.Transform)
		b = unit.AppendStrs(b, rule.Permissions)
	}
	b = unit.AppendTime(b, r.CreatedAt)
	b = unit.AppendStr(b, r.CreatedBy)
	if r.ExpiresAt != nil {
		b = unit.AppendTime(b, *r.ExpiresAt)
	}
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	b = unit.AppendStr(b, r.ModifiedBy)
	if len(r.AllowedOrigins) > 0 {
		b = unit.AppendStrs(b, r.AllowedOrigins)
	}
	if flags&appPurposes != 0 {
		b = AppendRulePurposes(b, r.Rules)
	}
	if rb := r.RevealBudget; rb != nil {
		b = binary.AppendUvarint(b, uint64(rb.Tokens))
		b = unit.AppendStr(unit.AppendStr(b, rb.Window), rb.Action)
		freeze := uint64(0)
		if rb.Freeze {
			freeze = 1
		}
		b = binary.AppendUvarint(b, freeze)
	}
	if r.Frozen != nil {
		b = unit.AppendTime(b, r.Frozen.At)
		b = unit.AppendStr(b, r.Frozen.Reason)
	}
	return b, nil
}

func (r *ApplicationRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		return r.decodeV0(key, b)
	}
	d, err := unit.BinaryRecord(b, ApplicationFormat, "application")
	if err != nil {
		return err
	}
	*r = ApplicationRecord{}
	r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
	flags := d.Uvarint()
	r.Name = d.Str()
	r.Type = ApplicationType(d.Str())
	r.KeyHash = d.Bytes()
	r.Permissions = d.Strs()
	r.Rules = make([]Rule, d.Count())
	for i := range r.Rules {
		rule := &r.Rules[i]
		rule.Description = d.Str()
		p := d.Varint()
		if int64(int(p)) != p {
			d.Fail("priority out of range")
		}
		rule.Priority = int(p)
		rule.Container = d.Str()
		if n := d.Count(); n > 0 {
			rule.Conditions = make([]Condition, n)
			for j := range rule.Conditions {
				c := &rule.Conditions[j]
				c.Attribute, c.Operator, c.Value = d.Str(), d.Str(), d.Str()
			}
		}
		rule.Transform = d.Str()
		rule.Permissions = d.Strs()
		if d.Err() != nil {
			break
		}
	}
	r.CreatedAt = d.Time()
	r.CreatedBy = d.Str()
	if flags&appExpires != 0 {
		r.ExpiresAt = new(d.Time())
	}
	if flags&appModified != 0 {
		r.ModifiedAt = new(d.Time())
	}
	r.ModifiedBy = d.Str()
	if flags&appOrigins != 0 {
		if r.AllowedOrigins = d.Strs(); len(r.AllowedOrigins) == 0 {
			d.Fail("empty allowed origins")
		}
	}
	if flags&appPurposes != 0 {
		if ReadRulePurposes(&d, r.Rules); !HasRulePurposes(r.Rules) && d.Err() == nil {
			d.Fail("no rule purposes")
		}
	}
	if flags&appBudget != 0 {
		rb := &RevealBudget{}
		n := d.Uvarint()
		if n == 0 || n > MaxBudgetTokens {
			d.Fail("reveal budget out of range")
		}
		rb.Tokens = int(n)
		rb.Window, rb.Action = d.Str(), d.Str()
		switch d.Uvarint() {
		case 0:
		case 1:
			rb.Freeze = true
		default:
			d.Fail("bad reveal budget freeze")
		}
		r.RevealBudget = rb
	}
	if flags&appFrozen != 0 {
		r.Frozen = &Freeze{At: d.Time(), Reason: d.Str()}
	}
	if flags >= appFrozen<<1 {
		d.Fail("unknown flags")
	}
	if err := d.End(); err != nil {
		*r = ApplicationRecord{}
		return err
	}
	return nil
}

// ApplicationRecordV0 is the JSON form applications were stored in before
// format version 1 (the API's Application with key_hash, the tags as they
// were; key was never set in a stored record, and is not read): read,
// never written, except by a test that writes a store as that code did.
// testdata/records/application-v0.json is one.
type ApplicationRecordV0 struct {
	ID          string     `json:"id"`
	TenantID    string     `json:"tenant_id"`
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Permissions []string   `json:"permissions"`
	Rules       []RuleV0   `json:"rules"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	CreatedBy   string     `json:"created_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ModifiedBy  string     `json:"modified_by,omitempty"`
	ModifiedAt  *time.Time `json:"modified_at,omitempty"`
	KeyHash     []byte     `json:"key_hash"`
}

// RuleV0 and ConditionV0 are Rule and Condition as version 0 stored
// them, in applications and in sessions.
type RuleV0 struct {
	Description string        `json:"description,omitempty"`
	Priority    int           `json:"priority"`
	Container   string        `json:"container,omitempty"`
	Conditions  []ConditionV0 `json:"conditions,omitempty"`
	Transform   string        `json:"transform"`
	Permissions []string      `json:"permissions"`
}

type ConditionV0 struct {
	Attribute string `json:"attribute"`
	Operator  string `json:"operator"`
	Value     string `json:"value"`
}

func (r *ApplicationRecord) decodeV0(key barrier.Key, b []byte) error {
	var v ApplicationRecordV0
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("%w: application JSON: %v", unit.ErrRecord, err)
	}
	*r = ApplicationRecord{
		Name: v.Name, Type: ApplicationType(v.Type), Permissions: v.Permissions,
		ExpiresAt: v.ExpiresAt, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt,
		ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt,
		KeyHash: v.KeyHash,
	}
	// The same lists as version 1 decodes: empty, never nil.
	if r.Permissions == nil {
		r.Permissions = []string{}
	}
	r.Rules = make([]Rule, len(v.Rules))
	for i, x := range v.Rules {
		rule := Rule{Description: x.Description, Priority: x.Priority, Container: x.Container,
			Transform: x.Transform, Permissions: x.Permissions}
		if rule.Permissions == nil {
			rule.Permissions = []string{}
		}
		if len(x.Conditions) > 0 {
			rule.Conditions = make([]Condition, len(x.Conditions))
			for j, c := range x.Conditions {
				rule.Conditions[j] = Condition(c)
			}
		}
		r.Rules[i] = rule
	}
	if len(r.KeyHash) == 0 {
		r.KeyHash = nil
	}
	// The key is what the seal authenticated: it names the application.
	r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
	return nil
}
