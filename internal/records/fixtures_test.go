package records

import (
	"path/filepath"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/records/recordfix"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The golden fixtures stay in the root's testdata/records, where the
// feature packages' own record tests (internal/intents) read them too.
var fixtureDir = filepath.Join("..", "..", "testdata", "records")

// recordCodec is a stored record with its own encoding (unit.Record).
type recordCodec = unit.Record

// The fixtures' ids and time, and the fixed application, are
// internal/records/recordfix's: the Vault-level record tests
// (internal/records/behaviour) build on them too.
const (
	fixTenant = recordfix.Tenant
	fixToken  = recordfix.Token
	fixActor  = recordfix.Actor
	fixApp    = recordfix.App
)

var (
	fixTime   = recordfix.Time
	fixAppKey = recordfix.AppKey
)

func fixedApplication() *access.ApplicationRecord { return recordfix.Application() }

func fixedPublicApplication() *access.ApplicationRecord { return recordfix.PublicApplication() }

func fixedPurposeApplication() *access.ApplicationRecord { return recordfix.PurposeApplication() }
func fixedFrozenApplication() *access.ApplicationRecord  { return recordfix.FrozenApplication() }

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
