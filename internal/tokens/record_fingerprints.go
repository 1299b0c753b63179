package tokens

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of where a store's fingerprint index is kept
// (FingerprintPlace, fingerprints.go), at sys/fingerprints, sealed with the
// system keyring.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 in memory
//
// Version 0 is the JSON written before (FingerprintPlaceV0); it still
// reads. The record is written once, so a store keeps the version it was
// first opened with.
const FingerprintsFormat = 1

const fpInMemory = 1

// FingerprintPlace is the record at sysFingerprintsKey: where the index of
// a store is kept. A store written with the index in memory has no index
// entries for its newer tokens, so it must never be opened as a shared
// store (for instance through a wrapper that hides store.SingleProcess):
// deduplication would miss them.
type FingerprintPlace struct {
	InMemory bool
}

func (p *FingerprintPlace) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	var flags uint64
	if p.InMemory {
		flags |= fpInMemory
	}
	return binary.AppendUvarint(append(b, FingerprintsFormat), flags), nil
}

func (p *FingerprintPlace) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v FingerprintPlaceV0
		if err := unit.DecodeJSONV0(b, &v, "fingerprint place"); err != nil {
			return err
		}
		*p = FingerprintPlace(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, FingerprintsFormat, "fingerprint place")
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	d.CheckFlags(flags, fpInMemory<<1)
	*p = FingerprintPlace{InMemory: flags&fpInMemory != 0}
	if err := d.End(); err != nil {
		*p = FingerprintPlace{}
		return err
	}
	return nil
}

// FingerprintPlaceV0 is a FingerprintPlace as format version 0 stored it:
// read, never written (testdata/records/fingerprints-v0.json).
type FingerprintPlaceV0 struct {
	InMemory bool `json:"in_memory"`
}
