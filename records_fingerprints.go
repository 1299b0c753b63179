package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of where a store's fingerprint index is kept
// (fingerprintPlace, tokens_fingerprints.go), at sys/fingerprints, sealed with the
// system keyring.
//
// Format version 1 (binary; see records.go):
//
//	0x01           format version
//	uvarint flags  1 in memory
//
// Version 0 is the JSON written before (fingerprintPlaceV0); it still
// reads. The record is written once, so a store keeps the version it was
// first opened with.
const fingerprintsFormat = 1

const fpInMemory = 1

// fingerprintPlace is the record at sysFingerprintsKey: where the index of
// a store is kept. A store written with the index in memory has no index
// entries for its newer tokens, so it must never be opened as a shared
// store (for instance through a wrapper that hides store.SingleProcess):
// deduplication would miss them.
type fingerprintPlace struct {
	InMemory bool
}

func (p *fingerprintPlace) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	var flags uint64
	if p.InMemory {
		flags |= fpInMemory
	}
	return appendUvarint(append(b, fingerprintsFormat), flags), nil
}

func (p *fingerprintPlace) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v fingerprintPlaceV0
		if err := unit.DecodeJSONV0(b, &v, "fingerprint place"); err != nil {
			return err
		}
		*p = fingerprintPlace(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, fingerprintsFormat, "fingerprint place")
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	d.CheckFlags(flags, fpInMemory<<1)
	*p = fingerprintPlace{InMemory: flags&fpInMemory != 0}
	if err := d.End(); err != nil {
		*p = fingerprintPlace{}
		return err
	}
	return nil
}

// fingerprintPlaceV0 is a fingerprintPlace as format version 0 stored it:
// read, never written (testdata/records/fingerprints-v0.json).
type fingerprintPlaceV0 struct {
	InMemory bool `json:"in_memory"`
}
