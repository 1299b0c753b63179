package auditlog

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// LastCheckpoint is the newest signed checkpoint of tenant tid's chain
// (the one covering the highest sequence number), or nil when none has
// been signed yet: one reverse step over its checkpoints, one record read.
//
// Returns the store's errors, or Internal for a record that does not open.
func LastCheckpoint(t *unit.Tx, tid string) (*CheckpointRecord, error) {
	var last *CheckpointRecord
	err := t.ScanBack(barrier.Tenant(tid).Checkpoints(), "", 1, func(k barrier.Key, _ string) error {
		var c CheckpointRecord
		ok, err := t.GetRecord(k, &c)
		if ok {
			last = &c
		}
		return err
	})
	return last, err
}
