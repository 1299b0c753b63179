package export

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// KindExport is the record kind of an export's signed manifest, at
// tenant/<tid>/export/<id>, sealed with the tenant's keyring like every
// record. It is written once, when the export ends, and never changed.
const KindExport = "export"

// Key is the record of export id of tenant tid.
func Key(tid, id string) barrier.Key { return barrier.Tenant(tid).Record(KindExport, id) }

// RecordKinds are the families of a tenant's keys that hold this
// package's records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(KindExport) }, New: func() unit.Record { return &Record{} }},
}
