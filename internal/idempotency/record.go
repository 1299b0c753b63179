package idempotency

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of an idempotency key's claim or kept response
// (Record), at tenant/<tid>/idempotency/<hmac>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01             format version
//	uvarint flags    1 response
//	uvarint version  the request fingerprint's scheme (Version)
//	bytes fingerprint
//	time  created_at
//	time  expires_at
//	str   claim
//	time  lease_until
//	response (flag 1): varint status, header (internal/records' doc),
//	                   bytes body
//	bytes grants
//
// Version 0 is the JSON written before (RecordV0); it still
// reads, and a record in it is written in version 1 when its response is
// kept, or by the re-seal pass.
const Format = 1

const idemResponse = 1

// Record is an idempotency key's claim or kept response, as
// stored.
type Record struct {
	Version     int
	Fingerprint []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// Claim identifies the run holding the key, until LeaseUntil; empty
	// once Response is kept.
	Claim      string
	LeaseUntil time.Time
	Response   *Response
	// Grants is the digest of the caller's grants at the first request
	// (the root's grantsDigest); empty in records written before it was kept.
	Grants []byte
}

// Response is the outcome of an idempotent call as its caller
// encodes it: httpapi keeps the HTTP status, headers and body (the root
// names it tokenvault.IdempotentResponse).
type Response struct {
	Status int                 `json:"status"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
}

// Expired reports whether the record has expired at now.
func (r *Record) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

func (r *Record) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	if err := unit.CheckRecordTimes("idempotency", &r.CreatedAt, &r.ExpiresAt, &r.LeaseUntil); err != nil {
		return b, err
	}
	var flags uint64
	if r.Response != nil {
		flags |= idemResponse
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = binary.AppendVarint(b, int64(r.Version))
	b = unit.AppendTime(unit.AppendTime(unit.AppendBytes(b, r.Fingerprint), r.CreatedAt), r.ExpiresAt)
	b = unit.AppendTime(unit.AppendStr(b, r.Claim), r.LeaseUntil)
	if r.Response != nil {
		b = binary.AppendVarint(b, int64(r.Response.Status))
		b = unit.AppendBytes(unit.AppendHeader(b, r.Response.Header), r.Response.Body)
	}
	return unit.AppendBytes(b, r.Grants), nil
}

func (r *Record) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v RecordV0
		if err := unit.DecodeJSONV0(b, &v, "idempotency"); err != nil {
			return err
		}
		*r = Record{Version: v.Version, Fingerprint: v.Fingerprint, CreatedAt: v.CreatedAt,
			ExpiresAt: v.ExpiresAt, Claim: v.Claim, LeaseUntil: v.LeaseUntil, Grants: v.Grants}
		if v.Response != nil {
			r.Response = &Response{Status: v.Response.Status, Header: v.Response.Header, Body: v.Response.Body}
			if len(r.Response.Body) == 0 {
				r.Response.Body = nil
			}
		}
		if len(r.Fingerprint) == 0 {
			r.Fingerprint = nil
		}
		if len(r.Grants) == 0 {
			r.Grants = nil
		}
		return nil
	}
	d, err := unit.BinaryRecord(b, Format, "idempotency")
	if err != nil {
		return err
	}
	*r = Record{}
	flags := d.Uvarint()
	version := d.Varint()
	if int64(int(version)) != version {
		d.Fail("version out of range")
	}
	r.Version = int(version)
	r.Fingerprint, r.CreatedAt, r.ExpiresAt = d.Bytes(), d.Time(), d.Time()
	r.Claim, r.LeaseUntil = d.Str(), d.Time()
	if flags&idemResponse != 0 {
		status := d.Varint()
		if int64(int(status)) != status {
			d.Fail("status out of range")
		}
		r.Response = &Response{Status: int(status), Header: d.Header(), Body: d.Bytes()}
	}
	r.Grants = d.Bytes()
	d.CheckFlags(flags, idemResponse<<1)
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// RecordV0 is an idempotency record as format version 0 stored
// it: read, never written (testdata/records/idempotency-v0.json).
type RecordV0 struct {
	Version     int       `json:"v"`
	Fingerprint []byte    `json:"fp"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	Claim       string    `json:"claim,omitempty"`
	LeaseUntil  time.Time `json:"lease_until,omitzero"`
	Response    *struct {
		Status int                 `json:"status"`
		Header map[string][]string `json:"header,omitempty"`
		Body   []byte              `json:"body,omitempty"`
	} `json:"response,omitempty"`
	Grants []byte `json:"grants,omitempty"`
}
