package unit

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Tx is one store transaction seen by the features: a barrier.Tx
// (embedded: it seals values on the way in and opens them on the way
// out), the call it serves, and what the features did in it until it
// ends, as hooks and locals they registered (hooks.go), never as fields
// of their own.
type Tx struct {
	*barrier.Tx
	// Now is the time of the transaction, in UTC: every record it writes
	// is dated by it.
	Now time.Time
	// Ctx is the call's context, for recording into its CallInfo.
	Ctx context.Context
	// AuthGen is the identity generation (Options.Generation) read before
	// the store transaction began: what a principal read in it may be
	// cached under.
	AuthGen uint64

	work   *Work
	hooks  []func(committed bool)
	locals []localValue
}

// GetRecord opens the record at key into dst. It reports false when the
// key does not exist.
func (t *Tx) GetRecord(key barrier.Key, dst Record) (bool, error) {
	b, ok, err := t.GetOpen(key)
	if err != nil || !ok {
		return false, err
	}
	return true, t.DecodeRecord(key, b, dst)
}

// OpenRecord decrypts and decodes a raw value stored at key.
func (t *Tx) OpenRecord(key barrier.Key, raw []byte, dst Record) error {
	b, err := t.Open(key, raw)
	if err != nil {
		return err
	}
	return t.DecodeRecord(key, b, dst)
}

// DecodeRecord decodes b, the plaintext stored at key, into dst in its
// record's own encoding, and clears b.
func (t *Tx) DecodeRecord(key barrier.Key, b []byte, dst Record) error {
	err := dst.DecodeRecord(key, b)
	clear(b) // the plaintext may hold token data
	if err != nil {
		return fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return nil
}

// PutRecord seals v under key with its tenant's active data key, or the
// system keyring for a key of no tenant, in its own encoding.
func (t *Tx) PutRecord(key barrier.Key, v Record) error {
	b, release, err := EncodeRecord(v, key)
	if err != nil {
		return err
	}
	defer release()
	return t.SealPut(key, b)
}

// PutNew is PutRecord for a record whose key is new by construction (an
// audit line): nothing reads it before it is written, so a store may take
// it as an append (barrier.Tx.SealAppend).
func (t *Tx) PutNew(key barrier.Key, v Record) error {
	b, release, err := EncodeRecord(v, key)
	if err != nil {
		return err
	}
	defer release()
	return t.SealAppend(key, b)
}

// GetPlainRecord decodes the plain record stored at key (a progress
// marker, which holds nothing secret: see internal/barrier's doc) into
// dst. It reports false when the key does not exist.
func (t *Tx) GetPlainRecord(key barrier.Key, dst Record) (bool, error) {
	raw, ok, err := t.GetPlain(key)
	if err != nil || !ok {
		return false, err
	}
	if err := dst.DecodeRecord(key, raw); err != nil {
		return true, fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return true, nil
}

// PutPlainRecord stores the record v at key unsealed: only for the
// progress markers internal/barrier's doc lists, which hold store keys
// and times.
func (t *Tx) PutPlainRecord(key barrier.Key, v Record) error {
	b, err := v.AppendRecord(nil, key)
	if err != nil {
		return fmt.Errorf("tokenvault: encode %s: %w", key, err)
	}
	return t.PutPlain(key, b)
}
