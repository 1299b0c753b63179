package tokens

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RecordKinds are the families of a tenant's keys that hold this package's
// records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(Kind) }, New: func() unit.Record { return &Record{} }},
}
