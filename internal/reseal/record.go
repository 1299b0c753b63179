package reseal

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant's re-seal marker (State, pass.go),
// at sys/reseal/<tid>: plain, not sealed (it holds a time and a store
// key, nothing secret), so that the pass finds its tenants without
// opening anything.
//
// Format version 1 (binary; see internal/unit/codec.go):
//
//	0x01  format version
//	time  not_before
//	str   after
//
// Version 0 is the plain JSON written before (StateV0); it still
// reads, and the pass's next step writes version 1.
const resealFormat = 1

// State is the value of a tenant's re-seal marker.
type State struct {
	// NotBefore is when the pass may start.
	NotBefore time.Time
	// After is the last key re-sealed; empty: from the start.
	After string
}

// AppendRecord encodes s (unit.Record).
func (s *State) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	if err := unit.CheckRecordTimes("re-seal marker", &s.NotBefore); err != nil {
		return b, err
	}
	return unit.AppendStr(unit.AppendTime(append(b, resealFormat), s.NotBefore), s.After), nil
}

// DecodeRecord decodes b into s (unit.Record).
func (s *State) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v StateV0
		if err := unit.DecodeJSONV0(b, &v, "re-seal marker"); err != nil {
			return err
		}
		*s = State(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, resealFormat, "re-seal marker")
	if err != nil {
		return err
	}
	*s = State{NotBefore: d.Time(), After: d.Str()}
	if err := d.End(); err != nil {
		*s = State{}
		return err
	}
	return nil
}

// StateV0 is a State as format version 0 stored it: read,
// never written (testdata/records/reseal-v0.json).
type StateV0 struct {
	NotBefore time.Time `json:"not_before"`
	After     string    `json:"after,omitempty"`
}
