package unit

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
)

// IDSource hands out UUIDv7 identifiers that are strictly increasing for one
// Vault: the timestamp comes from the Vault's clock, and ids made within one
// millisecond carry a counter in the 12 rand_a bits (RFC 9562, section 6.2,
// method 1). Ids therefore sort by creation order, which is what lists and
// the audit log show, and they append at the end of B-trees.
type IDSource struct {
	mu     sync.Mutex
	lastMs uint64
	seq    uint16 // 12 bits
}

// Next returns a new id not below any id this source returned before, even
// if the clock stands still or steps back.
func (s *IDSource) Next(now time.Time) string {
	ms := uint64(max(now.UnixMilli(), 0))
	s.mu.Lock()
	if ms > s.lastMs {
		var b [2]byte
		rand.Read(b[:])
		// Start low in the range so that many ids fit in one millisecond.
		s.lastMs, s.seq = ms, binary.BigEndian.Uint16(b[:])&0x3ff
	} else if s.seq++; s.seq > 0xfff {
		s.lastMs, s.seq = s.lastMs+1, 0
	}
	ms, seq := s.lastMs, s.seq
	s.mu.Unlock()

	var u uuid.UUID
	rand.Read(u[8:])
	binary.BigEndian.PutUint16(u[6:8], seq)
	u[0] = byte(ms >> 40)
	u[1] = byte(ms >> 32)
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// ValidID reports whether s is a UUID in its canonical form. Identifiers
// are checked before they are used in store keys.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// APIKeyPrefix starts every API key, so a leaked key is recognisable by
// secret scanners.
const APIKeyPrefix = "key_"

// NewAPIKey returns a fresh key with 256 bits of entropy.
func NewAPIKey() string {
	var b [32]byte
	rand.Read(b[:])
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// CheckIDs refuses an id filter that holds anything but UUIDs, naming the
// offending entries as param[i].
func CheckIDs(param string, ids []string) error {
	fe := FieldErrors{}
	for i, id := range ids {
		if !ValidID(id) {
			fe.Add(fmt.Sprintf("%s[%d]", param, i), "must be a UUID")
		}
	}
	return fe.Err()
}
