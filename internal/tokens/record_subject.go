package tokens

import (
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A token of a data subject (Record.Subject) keeps its Data and Mask
// sealed under the subject's own data key (internal/subjects), inside the
// record the tenant's keyring seals: destroying that key (an erasure)
// makes them unreadable in every copy of the record, a backup's too.
// What the record holds beside them (type, containers, metadata, keyed
// hashes) is the tenant's, as for every token: docs/erasure.md says what
// an erasure covers.

// MaxSubjectLength bounds a token's subject, in bytes.
const MaxSubjectLength = 200

// ValidateSubject reports a subject's problem at path: 1 to
// MaxSubjectLength bytes of UTF-8 with no control character and no
// leading or trailing space (a subject is an identifier: an id of the
// person in the caller's systems, not free text).
func ValidateSubject(subject, path string, fe unit.FieldErrors) {
	switch {
	case len(subject) > MaxSubjectLength:
		fe.Add(path, "must be at most %d bytes", MaxSubjectLength)
	case !ValidSubject(subject):
		fe.Add(path, "must be 1 to %d bytes of text without control characters, spaces at its ends or a slash", MaxSubjectLength)
	}
}

// ValidSubject reports whether s is a valid subject (ValidateSubject).
func ValidSubject(s string) bool {
	if s == "" || len(s) > MaxSubjectLength || unit.HasControl(s) || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for _, r := range s {
		if r == '/' || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// Sealing is what a token of a data subject holds beside its fields: the
// subject key's bytes while the record is in use (a read opened it, or
// Service.Write fetched it), and the stored Data and Mask sealed under it,
// as read. Its fields are unexported and it prints without them, so that
// the key never reaches a log line.
type Sealing struct {
	key    []byte
	sealed []byte
}

// String keeps the key out of any line that prints a record.
func (s *Sealing) String() string { return "tokens.Sealing{...}" }

// GoString is String, so that %#v does not print the key either.
func (s *Sealing) GoString() string { return s.String() }

// SetSubjectKey gives r the bytes of its subject key (SubjectKeyID), with
// which its Data and Mask are sealed when it is stored.
func (r *Record) SetSubjectKey(key []byte) {
	if r.Sealing == nil {
		r.Sealing = &Sealing{}
	}
	r.Sealing.key = key
}

func (r *Record) subjectKey() []byte {
	if r.Sealing == nil {
		return nil
	}
	return r.Sealing.key
}

func (r *Record) sealedBytes() []byte {
	if r.Sealing == nil {
		return nil
	}
	return r.Sealing.sealed
}

// subjectAAD binds the sealed bytes to the record's store key and the
// key id, so that they cannot be moved to another token.
func subjectAAD(key barrier.Key, keyID string) []byte {
	return []byte(key.String() + "\x00" + keyID)
}

// sealSubject seals Data and Mask under the subject key. A record read
// whose key is gone (Erased, or not opened) is written back with the
// sealed bytes it was read with.
func (r *Record) sealSubject(key barrier.Key) ([]byte, error) {
	if r.subjectKey() == nil {
		if r.sealedBytes() != nil {
			return r.sealedBytes(), nil
		}
		return nil, fmt.Errorf("%w: token of a data subject without its key", unit.ErrRecord)
	}
	ring, err := seal.KeyringOf(r.subjectKey())
	if err != nil {
		return nil, err
	}
	pt := unit.AppendBytes(unit.AppendBytes([]byte{1}, r.Data), r.Mask)
	return ring.Seal(subjectAAD(key, r.SubjectKeyID), pt), nil
}

// errSubjectOpen: the sealed bytes do not open with the key.
var errSubjectOpen = errors.New("tokenvault: a token's subject-sealed data does not open")

// OpenSubject opens the Data and Mask of r, a record read of a data
// subject, with the subject key's bytes, or, when key is nil (the key
// store no longer holds it), marks r Erased.
func (r *Record) OpenSubject(key []byte) error {
	if key == nil {
		r.Erased, r.Data, r.Mask = true, nil, nil
		return nil
	}
	ring, err := seal.KeyringOf(key)
	if err != nil {
		return err
	}
	pt, err := ring.Open(subjectAAD(barrier.Tenant(r.TenantID).Record(Kind, r.ID), r.SubjectKeyID), r.sealedBytes())
	if err != nil {
		return errSubjectOpen
	}
	d, err := unit.BinaryRecord(pt, 1, "token subject data")
	if err != nil {
		return errSubjectOpen
	}
	r.Data, r.Mask = d.Bytes(), d.Bytes()
	if err := d.End(); err != nil {
		return errSubjectOpen
	}
	r.SetSubjectKey(key)
	return nil
}
