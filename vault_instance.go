package tokenvault

import (
	"crypto/rand"
	"encoding/hex"
)

// The instance. Several Vaults may share one store (PostgreSQL: several
// processes behind a load balancer; in tests, two Vaults on one store), and
// the write path keeps them apart: a row that a commit writes besides its
// own records is one only its own instance writes (DESIGN.md, Writes), named
// by the instance's id. The id is random, drawn at Open, 16 hex digits: two
// Vaults never share one, and a restarted process is a new instance, whose
// predecessor's rows are folded by whoever holds the background leases.

// newInstanceID draws an instance id.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
