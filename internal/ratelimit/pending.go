package ratelimit

import (
	"encoding/hex"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// PendingAddress is the name of a caller's client address in the caps'
// per-address indexes (of sessions waiting for authorization and of token
// intents, MakeRoom): a keyed MAC, under the system keys sys, of its
// throttle address (Address), 128 bits in hex. The index keys never hold
// an address in clear; in-process callers without an address share one
// name.
func PendingAddress(sys *barrier.Keys, clientAddress string) string {
	addr := Address(clientAddress)
	return hex.EncodeToString(sys.MAC([]byte("pending-session-address\x00"), []byte(addr))[:16])
}
