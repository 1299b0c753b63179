package events

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RecordKinds are the families of a tenant's keys that hold this package's
// records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(unit.EntityWebhook) }, New: func() unit.Record { return &Webhook{} }},
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(barrier.KindWebhookDelivery) }, New: func() unit.Record { return &Delivery{} }},
}
