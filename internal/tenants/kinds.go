package tenants

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RecordKinds are the families of a tenant's keys that hold this package's
// records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(unit.EntityTenantInvitation) }, New: func() unit.Record { return &InvitationRecord{} }},
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(unit.EntityTenant) }, New: func() unit.Record { return &Record{} }},
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(unit.EntityTenantMember) }, New: func() unit.Record { return &MemberRecord{} }},
}
