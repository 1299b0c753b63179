package auditchain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"
)

// Checkpoint is a signed chain head: the vault's statement that the
// tenant's chain held, at CreatedAt, exactly the lines up to Seq, the
// last of which has Hash. Its JSON form is the one audit export and the
// operator API carry.
type Checkpoint struct {
	TenantID string `json:"tenant_id"`
	// Seq is the sequence number of the last line covered.
	Seq uint64 `json:"seq"`
	// Hash is that line's hash: the chain head.
	Hash      Hash      `json:"hash"`
	CreatedAt time.Time `json:"created_at"`
	// KeyID names the signing key (KeyID of its public key).
	KeyID string `json:"key_id"`
	// Final marks the tenant's last checkpoint, signed when the tenant
	// was deleted: no line follows Seq.
	Final bool `json:"final,omitempty"`
	// Signature is the Ed25519 signature of SignedBytes (base64 in JSON).
	Signature []byte `json:"signature"`
}

// SignedBytes are the bytes the signature covers (see the package
// documentation).
func (c *Checkpoint) SignedBytes() []byte {
	b := make([]byte, 0, 128+len(c.TenantID))
	b = appendString(b, checkpointDomain)
	b = appendString(b, c.TenantID)
	b = binary.BigEndian.AppendUint64(b, c.Seq)
	b = append(b, c.Hash[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.CreatedAt.UnixNano()))
	b = appendString(b, c.KeyID)
	if c.Final {
		return append(b, 1)
	}
	return append(b, 0)
}

// Sign sets c's KeyID to key's and signs c with it.
func (c *Checkpoint) Sign(key ed25519.PrivateKey) {
	c.KeyID = KeyID(key.Public().(ed25519.PublicKey))
	c.Signature = ed25519.Sign(key, c.SignedBytes())
}

// ErrBadSignature is returned by VerifySignature for a signature that
// does not verify, or a key that is not c's.
var ErrBadSignature = errors.New("auditchain: the checkpoint's signature does not verify")

// VerifySignature checks c's signature with pub, which must be the key
// c names.
func (c *Checkpoint) VerifySignature(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize || KeyID(pub) != c.KeyID || !ed25519.Verify(pub, c.SignedBytes(), c.Signature) {
		return ErrBadSignature
	}
	return nil
}

// KeyID is the id of an Ed25519 public key: the first 8 bytes of its
// SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// PublicKey is one of the vault's checkpoint signing keys, as the vault
// publishes them (GET /audit/keys, `tokenvault audit keys`).
type PublicKey struct {
	ID string `json:"id"`
	// Algorithm is "Ed25519".
	Algorithm string `json:"algorithm"`
	// Key is the 32-byte public key (base64 in JSON).
	Key       ed25519.PublicKey `json:"public_key"`
	CreatedAt time.Time         `json:"created_at"`
	// RetiredAt is when a rotation replaced the key; nil for the key in use.
	RetiredAt *time.Time `json:"retired_at,omitempty"`
}
