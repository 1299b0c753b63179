package approvals

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The record kinds of this package: a tenant's pending and decided
// changes, at tenant/<tid>/approval/<id>, and its policy, at
// tenant/<tid>/approval_policy/current. Both are sealed with the
// tenant's keyring like every record.
const (
	KindChange = "approval"
	KindPolicy = "approval_policy"
	policyID   = "current"
)

// ChangeKey is the record of change id of tenant tid, Changes their family
// (in the order of their ids: of their requests).
func ChangeKey(tid, id string) barrier.Key { return barrier.Tenant(tid).Record(KindChange, id) }

func Changes(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(KindChange) }

// PolicyKey is the record of tenant tid's policy.
func PolicyKey(tid string) barrier.Key { return barrier.Tenant(tid).Record(KindPolicy, policyID) }

// RecordKinds are the families of a tenant's keys that hold this package's
// records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return Changes(tid) }, New: func() unit.Record { return &Change{} }},
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(KindPolicy) }, New: func() unit.Record { return &Policy{} }},
}
