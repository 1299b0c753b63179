package auditchain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
)

// Hash is a SHA-256 digest: a line's hash, which is also the chain's head
// once that line is the last. Its text form is 64 lower-case hex digits.
type Hash [sha256.Size]byte

// String is h in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros: the prev of the first line.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes h as hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes 64 hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) != 2*len(h) {
		return fmt.Errorf("auditchain: a hash is %d hex digits, not %d", 2*len(h), len(b))
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return fmt.Errorf("auditchain: hash: %v", err)
	}
	return nil
}

// ParseHash decodes a hash from its hex form.
func ParseHash(s string) (Hash, error) {
	var h Hash
	return h, h.UnmarshalText([]byte(s))
}

// Line is what the chain covers of one audit log line: every field the
// vault's Log and its export (AuditEvent) show.
type Line struct {
	TenantID    string
	ID          string
	CreatedAt   time.Time
	ActorID     string
	ActorType   string
	EntityType  string
	EntityID    string
	Operation   string
	Message     string
	Transform   string
	Channel     string
	Application string
	// Purpose is the purpose of access the call named, on a line
	// recording an access to a token's data; empty otherwise.
	Purpose string
}

// lineDomain and checkpointDomain separate the two kinds of signed or
// hashed bytes, and name their version.
const (
	lineDomain       = "tokenvault.audit.line/v1"
	checkpointDomain = "tokenvault.audit.checkpoint/v1"
)

// LineHash is the hash of line l at sequence number seq, after the line
// whose hash is prev (the zero Hash for seq 1): see the package
// documentation for the bytes hashed.
func LineHash(prev Hash, seq uint64, l *Line) Hash {
	var buf [512]byte
	b := appendLineBytes(buf[:0], prev, seq, l)
	return sha256.Sum256(b)
}

// appendLineBytes appends the bytes LineHash hashes.
func appendLineBytes(b []byte, prev Hash, seq uint64, l *Line) []byte {
	b = appendString(b, lineDomain)
	b = binary.BigEndian.AppendUint64(b, seq)
	b = append(b, prev[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(l.CreatedAt.UnixNano()))
	for _, s := range [...]string{l.TenantID, l.ID, l.ActorID, l.ActorType, l.EntityType, l.EntityID,
		l.Operation, l.Message, l.Transform, l.Channel, l.Application} {
		b = appendString(b, s)
	}
	if l.Purpose != "" {
		b = appendString(b, l.Purpose) // only then: lines without hash as before
	}
	return b
}

// appendString appends s as its u32 big-endian length and its bytes.
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
