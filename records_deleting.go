package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant's deletion marker (deletionState,
// tenants_delete.go), at sys/deleting/<tid>: plain, not sealed (a phase
// and store keys, nothing secret), since it must be read while the
// tenant's keyring is being removed.
//
// Format version 1 (binary; see records.go):
//
//	0x01  format version
//	str   phase
//	str   prefix
//	str   after
//
// Version 0 is the plain JSON written before (deletionStateV0); it still
// reads, and the deletion's next step writes version 1.
const deletingFormat = 1

// deletionState is the value of a deletion marker.
type deletionState struct {
	Phase string
	// Prefix is the sys/ prefix being walked in the lookups and schedule
	// phases; After the last key visited under it.
	Prefix string
	After  string
}

func (s *deletionState) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return unit.AppendStr(unit.AppendStr(unit.AppendStr(append(b, deletingFormat), s.Phase), s.Prefix), s.After), nil
}

func (s *deletionState) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v deletionStateV0
		if err := unit.DecodeJSONV0(b, &v, "deletion marker"); err != nil {
			return err
		}
		*s = deletionState(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, deletingFormat, "deletion marker")
	if err != nil {
		return err
	}
	*s = deletionState{Phase: d.Str(), Prefix: d.Str(), After: d.Str()}
	if err := d.End(); err != nil {
		*s = deletionState{}
		return err
	}
	return nil
}

// deletionStateV0 is a deletionState as format version 0 stored it: read,
// never written (testdata/records/deleting-v0.json).
type deletionStateV0 struct {
	Phase  string `json:"phase"`
	Prefix string `json:"prefix,omitempty"`
	After  string `json:"after,omitempty"`
}
