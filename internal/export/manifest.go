package export

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

// Format names the manifest's and the stream's version.
const Format = "tokenvault-export-v1"

// manifestDomain starts the signed bytes, so that a signature of a
// manifest is never one of a checkpoint.
const manifestDomain = "tokenvault export manifest v1"

// Filter is what an export selected: every token of the tenant when
// empty, otherwise those in Container (or below it), of Type, and
// matching Query (the search language of POST /tokens/search), together.
type Filter struct {
	Container string `json:"container,omitempty"`
	Type      string `json:"type,omitempty"`
	Query     string `json:"query,omitempty"`
}

// Manifest says what one export holds, signed by the vault's audit key,
// so that a receiving system can check it got everything: the count of
// lines and the SHA-256 of the NDJSON plaintext (checked after
// decryption) and of the age ciphertext (checked before). It holds no
// token data.
type Manifest struct {
	Format    string `json:"format"`
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Filter    Filter `json:"filter"`
	Recipient string `json:"recipient"`
	// Count is the number of tokens (lines) exported.
	Count            int64     `json:"count"`
	PlaintextSize    int64     `json:"plaintext_size"`
	PlaintextSHA256  string    `json:"plaintext_sha256"`
	CiphertextSize   int64     `json:"ciphertext_size"`
	CiphertextSHA256 string    `json:"ciphertext_sha256"`
	StartedAt        time.Time `json:"started_at"`
	FinishedAt       time.Time `json:"finished_at"`
	// ActorID and ActorType are who exported (a management application).
	ActorID   string `json:"actor_id"`
	ActorType string `json:"actor_type"`
	// ApprovalID is the approved change the export used, when the
	// tenant's approval policy held it.
	ApprovalID string `json:"approval_id,omitempty"`
	// KeyID names the audit signing key (auditchain.KeyID).
	KeyID string `json:"key_id"`
	// Signature is the Ed25519 signature of SignedBytes (base64 in JSON).
	Signature []byte `json:"signature"`
}

// SignedBytes are the bytes the signature covers (see the package doc).
func (m *Manifest) SignedBytes() []byte {
	b := make([]byte, 0, 512)
	str := func(s string) { b = append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	num := func(n int64) { b = binary.BigEndian.AppendUint64(b, uint64(n)) }
	str(manifestDomain)
	str(m.Format)
	str(m.ID)
	str(m.TenantID)
	str(m.Filter.Container)
	str(m.Filter.Type)
	str(m.Filter.Query)
	str(m.Recipient)
	num(m.Count)
	num(m.PlaintextSize)
	str(m.PlaintextSHA256)
	num(m.CiphertextSize)
	str(m.CiphertextSHA256)
	num(m.StartedAt.UnixNano())
	num(m.FinishedAt.UnixNano())
	str(m.ActorID)
	str(m.ActorType)
	str(m.ApprovalID)
	str(m.KeyID)
	return b
}

// Digest is the SHA-256 (hex) of SignedBytes: the manifest's name in the
// audit line of its export.
func (m *Manifest) Digest() string {
	sum := sha256.Sum256(m.SignedBytes())
	return hex.EncodeToString(sum[:])
}

// Sign sets m's KeyID to key's and signs m with it.
func (m *Manifest) Sign(key ed25519.PrivateKey) {
	m.KeyID = auditchain.KeyID(key.Public().(ed25519.PublicKey))
	m.Signature = ed25519.Sign(key, m.SignedBytes())
}

// ErrBadSignature: the manifest's signature does not verify with the key
// it names, or no key given is that key.
var ErrBadSignature = errors.New("export: the manifest's signature does not verify")

// VerifySignature checks m's signature with the key of keys that m names.
func (m *Manifest) VerifySignature(keys []auditchain.PublicKey) error {
	for _, k := range keys {
		if k.ID == m.KeyID && len(k.Key) == ed25519.PublicKeySize && auditchain.KeyID(k.Key) == m.KeyID {
			if ed25519.Verify(k.Key, m.SignedBytes(), m.Signature) {
				return nil
			}
		}
	}
	return ErrBadSignature
}
