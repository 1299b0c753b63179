package auditlog

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Head is the head of a tenant's audit chain, at
// tenant/<tid>/chain/head (chain.go).
//
// Format version 1:
//
//	0x01       format version
//	uvarint    seq: the last line's sequence number (0: none yet)
//	32 bytes   hash: the last line's hash
//	uvarint    first_seq: the first line kept (1 unless retention pruned
//	           the lines before it; a checkpoint at first_seq-1 anchors it)
//	time       since: when the chain began; lines older are not chained
//	uvarint    signed_seq: the last line a checkpoint covers (0: none)
//	time       signed_at: when that checkpoint was signed (zero: none)
//	str        key_id: the key that signed it ("" before the first)
//
// testdata/records/chain-head-v1.bin is one.
type Head struct {
	Seq       uint64
	Hash      auditchain.Hash
	FirstSeq  uint64
	Since     time.Time
	SignedSeq uint64
	SignedAt  time.Time
	KeyID     string
}

const chainHeadFormat = 1

func (h *Head) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	if err := unit.CheckRecordTimes("chain head", &h.Since, &h.SignedAt); err != nil {
		return b, err
	}
	b = append(b, chainHeadFormat)
	b = binary.AppendUvarint(b, h.Seq)
	b = append(b, h.Hash[:]...)
	b = binary.AppendUvarint(b, h.FirstSeq)
	b = unit.AppendTime(b, h.Since)
	b = binary.AppendUvarint(b, h.SignedSeq)
	b = unit.AppendTime(b, h.SignedAt)
	b = unit.AppendStr(b, h.KeyID)
	return b, nil
}

func (h *Head) DecodeRecord(_ barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, chainHeadFormat, "chain head")
	if err != nil {
		return err
	}
	*h = Head{Seq: d.Uvarint()}
	copy(h.Hash[:], d.Next(uint64(len(h.Hash))))
	h.FirstSeq = d.Uvarint()
	h.Since = d.Time()
	h.SignedSeq = d.Uvarint()
	h.SignedAt = d.Time()
	h.KeyID = d.Str()
	if err := d.End(); err != nil {
		*h = Head{}
		return err
	}
	return nil
}

// Link, as its own record, is a chained line's link, at
// tenant/<tid>/chain_link/<nanos>/<id> beside the line
// log/<nanos>/<id> (chain.go): the linker writes it and leaves the line
// as its commit wrote it.
//
// Format version 1:
//
//	0x01       format version
//	uvarint    seq: the line's sequence number in the chain
//	32 bytes   prev: the hash of line seq-1 (zeros for seq 1)
//	32 bytes   hash: the line's own hash (auditchain.LineHash)
//
// testdata/records/chain-link-v1.bin is one. Lines linked before it hold
// their link in their own record instead (records_log.go, flag 4).
const chainLinkFormat = 1

func (l *Link) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	b = append(b, chainLinkFormat)
	b = binary.AppendUvarint(b, l.Seq)
	b = append(b, l.Prev[:]...)
	b = append(b, l.Hash[:]...)
	return b, nil
}

func (l *Link) DecodeRecord(_ barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, chainLinkFormat, "chain link")
	if err != nil {
		return err
	}
	*l = Link{Seq: d.Uvarint()}
	copy(l.Prev[:], d.Next(uint64(len(l.Prev))))
	copy(l.Hash[:], d.Next(uint64(len(l.Hash))))
	if err := d.End(); err != nil {
		*l = Link{}
		return err
	}
	return nil
}
