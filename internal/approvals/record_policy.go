package approvals

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant's approval policy (Policy), at
// tenant/<tid>/approval_policy/current, sealed with the tenant's keyring.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  none yet; a bit this code does not know is refused
//	uvarint required     how many approvals a change needs (m)
//	strs  approvers      the ids of the management applications that may approve
//	strs  operations     the operations that need approval (Op*)
//	varint ttl           how long a change waits for approval, in seconds
//	uvarint detokenize_over  a detokenization of more distinct tokens than
//	                     this in one call needs approval (with
//	                     OpDetokenizeBulk among the operations)
//	str   modified_by    the actor id that set the policy
//	str   modified_by_type
//	time  modified_at
//
// The tenant is the store key's. There is no version 0.
const policyFormat = 1

// Policy is a tenant's approval policy as stored.
type Policy struct {
	TenantID       string
	Required       int
	Approvers      []string
	Operations     []string
	TTL            time.Duration
	DetokenizeOver int
	ModifiedBy     string
	ModifiedByType string
	ModifiedAt     time.Time
}

func (p *Policy) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, KindPolicy, p.TenantID, policyID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("approval policy", &p.ModifiedAt); err != nil {
		return b, err
	}
	b = binary.AppendUvarint(append(b, policyFormat), 0)
	b = binary.AppendUvarint(b, uint64(p.Required))
	b = unit.AppendStrs(unit.AppendStrs(b, p.Approvers), p.Operations)
	b = binary.AppendVarint(b, int64(p.TTL/time.Second))
	b = binary.AppendUvarint(b, uint64(p.DetokenizeOver))
	b = unit.AppendStr(unit.AppendStr(b, p.ModifiedBy), p.ModifiedByType)
	return unit.AppendTime(b, p.ModifiedAt), nil
}

func (p *Policy) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, policyFormat, "approval policy")
	if err != nil {
		return err
	}
	*p = Policy{TenantID: key.Tenant()}
	flags := d.Uvarint()
	p.Required = int(d.Uvarint())
	p.Approvers, p.Operations = d.Strs(), d.Strs()
	p.TTL = time.Duration(d.Varint()) * time.Second
	p.DetokenizeOver = int(d.Uvarint())
	p.ModifiedBy, p.ModifiedByType = d.Str(), d.Str()
	p.ModifiedAt = d.Time()
	d.CheckFlags(flags, 1)
	if err := d.End(); err != nil {
		*p = Policy{}
		return err
	}
	return nil
}
