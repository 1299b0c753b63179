package unit

import (
	"fmt"
	"sync"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Record is a stored record with its own encoding (its type, defined field
// by field in the file of its feature, and never by an exported type's
// JSON tags, so that changing the API never changes what is on disk).
// Tx's GetRecord, OpenRecord, PutRecord, PutNew, GetPlainRecord and
// PutPlainRecord take nothing else, so the compiler holds every stored
// kind to it.
type Record interface {
	// AppendRecord appends the record's encoding, for the store key key,
	// to dst. Fields the key holds (tenant, id) are not stored; it fails
	// when the record does not belong at key.
	AppendRecord(dst []byte, key barrier.Key) ([]byte, error)
	// DecodeRecord sets the record from the plaintext b stored at key, in
	// any format version (JSON included) this code reads.
	DecodeRecord(key barrier.Key, b []byte) error
}

// plainBuffers recycles the plaintext buffers records are encoded into
// before sealing; they are cleared before they go back, so no secret
// lingers in a pooled buffer.
var plainBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// EncodeRecord encodes v for key into a pooled buffer; release returns it.
func EncodeRecord(v Record, key barrier.Key) (b []byte, release func(), err error) {
	p := plainBuffers.Get().(*[]byte)
	b, err = v.AppendRecord((*p)[:0], key)
	release = func() {
		clear(b[:cap(b)])
		if cap(b) <= 64<<10 {
			*p = b[:0]
			plainBuffers.Put(p)
		}
	}
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("tokenvault: encode %s: %w", key, err)
	}
	return b, release, nil
}
