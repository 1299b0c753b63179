package tokenvault

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// newID returns a UUIDv7 whose timestamp comes from the Vault's clock, so ids
// sort by creation time (append-friendly in B-trees) also under a test clock.
func newID(now time.Time) string {
	var u uuid.UUID
	rand.Read(u[6:])
	ms := uint64(now.UnixMilli())
	u[0] = byte(ms >> 40)
	u[1] = byte(ms >> 32)
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// validID reports whether s is a UUID in its canonical form. Identifiers
// are checked before they are used in store keys.
func validID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// apiKeyPrefix starts every API key, so a leaked key is recognisable by
// secret scanners.
const apiKeyPrefix = "key_"

// newAPIKey returns a fresh key with 256 bits of entropy.
func newAPIKey() string {
	var b [32]byte
	rand.Read(b[:])
	return apiKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}
