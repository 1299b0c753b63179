package auditchain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"
)

// ErasureCertificate is the vault's signed statement that it erased a
// data subject (docs/erasure.md): that it destroyed the subject's data
// key, so that none of the subject's tokens can be read again, not even
// from a copy of the data store taken before. It is signed with the
// vault's audit signing key (the keys GET /audit/keys publishes), and
// its Hash is in the tenant's chained audit line of the erasure (entity
// type "subject", entity id ID, a message naming the hash), so that a
// certificate can be checked offline (VerifySignature) and against the
// chain.
type ErasureCertificate struct {
	// ID names the erasure: the entity id of its audit line.
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	// Subject is the data subject erased, as the tokens named it.
	Subject string `json:"subject"`
	// Tokens is how many of the subject's tokens the erasure removed.
	Tokens int `json:"tokens"`
	// KeyIDs are the ids of the subject's data keys destroyed (empty when
	// the subject had no key: nothing to destroy).
	KeyIDs []string `json:"key_ids"`
	// KeyDestruction says how the keys were destroyed.
	KeyDestruction string `json:"key_destruction"`
	// KeysDestroyedAt is when the keys were removed from the subject key
	// store; ErasedAt when the erasure finished (this certificate).
	KeysDestroyedAt time.Time `json:"keys_destroyed_at"`
	ErasedAt        time.Time `json:"erased_at"`
	// ErasedBy and ErasedByType are the actor (an application or a
	// member) who asked.
	ErasedBy     string `json:"erased_by"`
	ErasedByType string `json:"erased_by_type"`
	// KeyID names the audit signing key (KeyID of its public key).
	KeyID string `json:"key_id"`
	// Signature is the Ed25519 signature of SignedBytes (base64 in JSON).
	Signature []byte `json:"signature"`
}

// KeyDestructionDeleted is the KeyDestruction of a key removed from the
// subject key store (its record deleted, not flagged).
const KeyDestructionDeleted = "deleted from the subject key store"

const erasureDomain = "tokenvault.erasure.certificate/v1"

// SignedBytes are the bytes the signature covers: every field but the
// signature, each length-prefixed, after a domain string of their own.
func (c *ErasureCertificate) SignedBytes() []byte {
	b := make([]byte, 0, 256)
	b = appendString(b, erasureDomain)
	b = appendString(b, c.ID)
	b = appendString(b, c.TenantID)
	b = appendString(b, c.Subject)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Tokens))
	b = binary.BigEndian.AppendUint32(b, uint32(len(c.KeyIDs)))
	for _, k := range c.KeyIDs {
		b = appendString(b, k)
	}
	b = appendString(b, c.KeyDestruction)
	b = binary.BigEndian.AppendUint64(b, uint64(c.KeysDestroyedAt.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.ErasedAt.UnixNano()))
	b = appendString(b, c.ErasedBy)
	b = appendString(b, c.ErasedByType)
	return appendString(b, c.KeyID)
}

// Sign sets c's KeyID to key's and signs c with it.
func (c *ErasureCertificate) Sign(key ed25519.PrivateKey) {
	c.KeyID = KeyID(key.Public().(ed25519.PublicKey))
	c.Signature = ed25519.Sign(key, c.SignedBytes())
}

// Hash is the hash of the signed certificate (its signed bytes and its
// signature): what the audit line of the erasure names.
func (c *ErasureCertificate) Hash() Hash {
	return sha256.Sum256(append(c.SignedBytes(), c.Signature...))
}

// ErrCertificate is returned by VerifyCertificate for a certificate
// whose signature does not verify with any of the keys (a changed
// certificate, or one signed by a key not given).
var ErrCertificate = errors.New("auditchain: the erasure certificate's signature does not verify")

// VerifyCertificate checks c's signature with the key of keys it names
// (retired keys included: a certificate signed before a rotation still
// verifies). It returns ErrCertificate when it does not verify.
func VerifyCertificate(c *ErasureCertificate, keys []PublicKey) error {
	for _, k := range keys {
		if k.ID != c.KeyID {
			continue
		}
		pub := k.Key
		if len(pub) == ed25519.PublicKeySize && KeyID(pub) == c.KeyID && ed25519.Verify(pub, c.SignedBytes(), c.Signature) {
			return nil
		}
	}
	return ErrCertificate
}

// ErasureMessage is the message of the audit line of an erasure: it
// names the certificate's hash, which chains the certificate.
func ErasureMessage(h Hash) string { return "Subject erased; certificate sha256:" + h.String() }
