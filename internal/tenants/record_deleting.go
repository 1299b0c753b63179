package tenants

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant's deletion marker (DeletionState, see
// deletion.go), at sys/deleting/<tid>: plain, not sealed (a phase
// and store keys, nothing secret), since it must be read while the
// tenant's keyring is being removed.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01  format version
//	str   phase
//	str   prefix
//	str   after
//
// Version 0 is the plain JSON written before (DeletionStateV0); it still
// reads, and the deletion's next step writes version 1.
const DeletingFormat = 1

// DeletionState is the value of a deletion marker.
type DeletionState struct {
	Phase string
	// Prefix is the sys/ prefix being walked in the lookups and schedule
	// phases; After the last key visited under it.
	Prefix string
	After  string
}

func (s *DeletionState) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return unit.AppendStr(unit.AppendStr(unit.AppendStr(append(b, DeletingFormat), s.Phase), s.Prefix), s.After), nil
}

func (s *DeletionState) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v DeletionStateV0
		if err := unit.DecodeJSONV0(b, &v, "deletion marker"); err != nil {
			return err
		}
		*s = DeletionState(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, DeletingFormat, "deletion marker")
	if err != nil {
		return err
	}
	*s = DeletionState{Phase: d.Str(), Prefix: d.Str(), After: d.Str()}
	if err := d.End(); err != nil {
		*s = DeletionState{}
		return err
	}
	return nil
}

// DeletionStateV0 is a DeletionState as format version 0 stored it: read,
// never written (testdata/records/deleting-v0.json).
type DeletionStateV0 struct {
	Phase  string `json:"phase"`
	Prefix string `json:"prefix,omitempty"`
	After  string `json:"after,omitempty"`
}
