package sessions

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a session (Record), at
// tenant/<tid>/session/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 authorized, 2 authorized_at, 4 rules' purposes
//	str   application_id   the public application that created it
//	bytes key_hash         keyed hash of the session key
//	bytes nonce_hash       keyed hash of the nonce; empty once used
//	time  created_at
//	time  expires_at
//	str   pending_address
//	str   authorized_by
//	time  authorized_at    (flag 2)
//	strs0 grants' permissions, rules grants' rules
//	strs0 ceiling's permissions, rules ceiling's rules
//	purposes of the grants' rules, then of the ceiling's (flag 4;
//	access.AppendRulePurposes)
//
// Flag 4 came with purposes of access, within version 1: it is set only
// when a rule has purposes, so every session without is as it was.
// The tenant and id are the store key's. Grants keep nil lists apart
// from empty ones (internal/records' doc): the principal's grants
// are hashed as JSON (the root's grantsDigest), where they differ.
// Version 0 is the JSON written before (RecordV0); it still reads, and a
// session in it is written in version 1 on its next write and by the
// re-seal pass.
const Format = 1

const (
	sessionAuthorized = 1 << iota
	sessionAuthorizedAt
	sessionPurposes
)

// Record is a session as stored.
type Record struct {
	ID            string
	TenantID      string
	ApplicationID string // the public application that created it
	KeyHash       []byte
	NonceHash     []byte // nil once used
	CreatedAt     time.Time
	ExpiresAt     time.Time

	// PendingAddress names the creator's address in the per-address
	// index of waiting sessions (limits.go); "" for sessions
	// created before that index.
	PendingAddress string

	Authorized   bool
	AuthorizedBy string
	AuthorizedAt *time.Time
	Grants       access.Grants
	// Ceiling is what the authorizer held at authorization.
	Ceiling access.Grants
}

// Expired reports whether the session has expired at now.
func (s *Record) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// PendingKeys are the index entries of a session waiting for
// authorization (limits.go).
func (s *Record) PendingKeys() []barrier.Key {
	return barrier.Tenant(s.TenantID).CapEntries(barrier.PendingSessionCaps, s.ApplicationID, s.PendingAddress, s.ExpiresAt, s.ID)
}

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntitySession, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("session", &r.CreatedAt, &r.ExpiresAt, r.AuthorizedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.Authorized {
		flags |= sessionAuthorized
	}
	if r.AuthorizedAt != nil {
		flags |= sessionAuthorizedAt
	}
	if access.HasRulePurposes(r.Grants.Rules) || access.HasRulePurposes(r.Ceiling.Rules) {
		flags |= sessionPurposes
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = unit.AppendBytes(unit.AppendBytes(unit.AppendStr(b, r.ApplicationID), r.KeyHash), r.NonceHash)
	b = unit.AppendTime(unit.AppendTime(b, r.CreatedAt), r.ExpiresAt)
	b = unit.AppendStr(unit.AppendStr(b, r.PendingAddress), r.AuthorizedBy)
	if r.AuthorizedAt != nil {
		b = unit.AppendTime(b, *r.AuthorizedAt)
	}
	b = access.AppendRules(unit.AppendStrs0(b, r.Grants.Permissions), r.Grants.Rules)
	b = access.AppendRules(unit.AppendStrs0(b, r.Ceiling.Permissions), r.Ceiling.Rules)
	if flags&sessionPurposes != 0 {
		b = access.AppendRulePurposes(access.AppendRulePurposes(b, r.Grants.Rules), r.Ceiling.Rules)
	}
	return b, nil
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v RecordV0
		if err := unit.DecodeJSONV0(b, &v, "session"); err != nil {
			return err
		}
		*r = Record{ApplicationID: v.ApplicationID, KeyHash: v.KeyHash, NonceHash: v.NonceHash,
			CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt, PendingAddress: v.PendingAddress,
			Authorized: v.Authorized, AuthorizedBy: v.AuthorizedBy, AuthorizedAt: v.AuthorizedAt,
			Grants:  access.Grants{Permissions: v.Grants.Permissions, Rules: rulesFromV0(v.Grants.Rules)},
			Ceiling: access.Grants{Permissions: v.Ceiling.Permissions, Rules: rulesFromV0(v.Ceiling.Rules)}}
		if len(r.KeyHash) == 0 {
			r.KeyHash = nil
		}
		if len(r.NonceHash) == 0 {
			r.NonceHash = nil
		}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, Format, "session")
	if err != nil {
		return err
	}
	*r = Record{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.ApplicationID, r.KeyHash, r.NonceHash = d.Str(), d.Bytes(), d.Bytes()
	r.CreatedAt, r.ExpiresAt = d.Time(), d.Time()
	r.PendingAddress, r.AuthorizedBy = d.Str(), d.Str()
	r.Authorized = flags&sessionAuthorized != 0
	r.AuthorizedAt = d.OptTime(flags, sessionAuthorizedAt)
	r.Grants.Permissions, r.Grants.Rules = d.Strs0(), access.ReadRules(&d)
	r.Ceiling.Permissions, r.Ceiling.Rules = d.Strs0(), access.ReadRules(&d)
	if flags&sessionPurposes != 0 {
		access.ReadRulePurposes(&d, r.Grants.Rules)
		access.ReadRulePurposes(&d, r.Ceiling.Rules)
	}
	d.CheckFlags(flags, sessionPurposes<<1)
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// RecordV0 is a session as format version 0 stored it: read, never
// written (testdata/records/session-v0.json).
type RecordV0 struct {
	ID             string     `json:"id"`
	TenantID       string     `json:"tenant_id"`
	ApplicationID  string     `json:"application_id"`
	KeyHash        []byte     `json:"key_hash"`
	NonceHash      []byte     `json:"nonce_hash,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	ExpiresAt      time.Time  `json:"expires_at"`
	PendingAddress string     `json:"pending_address,omitempty"`
	Authorized     bool       `json:"authorized"`
	AuthorizedBy   string     `json:"authorized_by,omitempty"`
	AuthorizedAt   *time.Time `json:"authorized_at,omitempty"`
	Grants         GrantsV0   `json:"grants"`
	Ceiling        GrantsV0   `json:"ceiling"`
}

// GrantsV0 is grants as format version 0 of a session stored them, the
// rules as applications' version 0 stored theirs (access.RuleV0).
type GrantsV0 struct {
	Permissions []string        `json:"permissions"`
	Rules       []access.RuleV0 `json:"rules"`
}

// rulesFromV0 converts rules of version 0, nil lists kept nil (unlike an
// application's, which version 1 of a session keeps apart).
func rulesFromV0(v []access.RuleV0) []access.Rule {
	if v == nil {
		return nil
	}
	rules := make([]access.Rule, len(v))
	for i, x := range v {
		rules[i] = access.Rule{Description: x.Description, Priority: x.Priority, Container: x.Container,
			Transform: x.Transform, Permissions: x.Permissions}
		if x.Conditions != nil {
			rules[i].Conditions = make([]access.Condition, len(x.Conditions))
			for j, c := range x.Conditions {
				rules[i].Conditions[j] = access.Condition(c)
			}
		}
	}
	return rules
}
