package idempotency

import "github.com/tokenvault/tokenvault/internal/unit"

// ExpiryKind is the sweeper's handler of this package's schedule
// entries: a record whose window is over is removed (Sweep).
var ExpiryKind = unit.ExpiryKind{Kind: Kind, Swept: "idempotency", Expire: Sweep}
