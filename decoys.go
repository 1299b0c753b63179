package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Decoys (honeytokens). A tenant plants tokens that no legitimate caller
// ever reads: CreateDecoy makes one as if an application of the tenant
// had created it (same shape, id, lists, events and answers as its other
// tokens: nothing any key but a manager's ListDecoys sees tells it
// apart). Any read of a decoy (a get, a detokenization, a list or search
// page showing its data, a proxy's or reactor's use) answers as any read
// would, and then fires access.anomaly at once and, when the decoy says
// so (the default), freezes the application whose key read it (for a
// session, the application that authorized it) until a manager releases
// it (UnfreezeApplication).
//
// The mark is a flag of the token's record (no read pays for it: the
// record is read anyway) and an entry of the tenant's decoy index, which
// ListDecoys scans; both go with the token. The audit log records the
// decoy's creation by the managing key: a key holding log:read sees it
// there.

// MaxDecoys is how many decoys a tenant may hold.
const MaxDecoys = 1000

// CreateDecoyRequest is the body of CreateDecoy.
type CreateDecoyRequest struct {
	// ApplicationID names the application of the tenant the decoy appears
	// created by (its created_by, and the actor of its token.created
	// event): it must hold token:create where the decoy goes. Required.
	ApplicationID string `json:"application_id"`
	// Token is the decoy's token, as CreateToken takes it (no
	// deduplication: a decoy is always a new token).
	Token TokenRequest `json:"token"`
	// Freeze says whether a read of the decoy freezes the key that read
	// it; nil (absent) means true.
	Freeze *bool `json:"freeze,omitempty"`
}

// Decoy is a decoy token as ListDecoys shows it to a manager.
type Decoy struct {
	// ID is the decoy's token id.
	ID string `json:"id"`
	// ApplicationID is the application it appears created by.
	ApplicationID string `json:"application_id"`
	// Freeze says whether a read of it freezes the key that read it.
	Freeze    bool      `json:"freeze"`
	CreatedAt time.Time `json:"created_at"`
}

// authorizeDecoys authorizes key to manage decoys: a management
// application's key holding tenant:update.
func (t *txn) authorizeDecoys(key Credential) (*principal, error) {
	p, err := t.authorize(key, PermTenantUpdate)
	if err != nil {
		return nil, err
	}
	if p.ActorType != ActorApplication || p.AppType != access.Management {
		return nil, unit.Errorf(unit.PermissionDenied, "only a management application's key manages decoys")
	}
	return p, nil
}

// CreateDecoy creates a decoy token (see the package's Decoys) and
// returns it as ListDecoys shows it; the token itself is never returned,
// so the management key that plants it need not be able to read it.
// Requires a management key holding tenant:update.
//
// Returns Invalid (with fields) for a bad request or an unknown
// application_id, PermissionDenied when the application may not create
// the token there, Conflict past MaxDecoys; like every call with a key,
// Unauthenticated, RateLimited, StorageFull and Internal.
func (v *Vault) CreateDecoy(ctx context.Context, key Credential, req CreateDecoyRequest) (*Decoy, error) {
	if err := jsontext.CheckGoText(req.Token, "token"); err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	if !unit.ValidID(req.ApplicationID) {
		fe.Add("application_id", "is required: the application the decoy appears created by")
	}
	req.Token.DeduplicateToken = false
	now := v.now()
	pt := v.tokens.Prepare(req.Token, now, now, "token", true, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	pt.Decoy, pt.DecoyFreeze = true, req.Freeze == nil || *req.Freeze
	var out *Decoy
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorizeDecoys(key)
		if err != nil {
			return err
		}
		n := 0
		if err := t.ScanKeys(tokens.DecoyIndex(p.TenantID), func(barrier.Key, string) error { n++; return nil }); err != nil {
			return err
		}
		if n >= MaxDecoys {
			return unit.Errorf(unit.Conflict, "a tenant may hold at most %d decoys", MaxDecoys)
		}
		as, err := access.AsApplication(t.Tx, p.TenantID, req.ApplicationID)
		if unit.ErrorKind(err) == unit.Unauthenticated {
			return unit.InvalidField("application_id", "no such application")
		}
		if err != nil {
			return err
		}
		tok, err := v.tokens.Create(t.Tx, as, pt)
		if err != nil {
			return err
		}
		out = &Decoy{ID: tok.ID, ApplicationID: as.ActorID, Freeze: pt.DecoyFreeze, CreatedAt: t.Now}
		return t.Log(p.Actor(), p.TenantID, tok.Type, tok.ID, OpCreate, "Decoy token planted")
	})
	return out, err
}

// ListDecoys lists the tenant's decoys in id order (at most MaxDecoys).
// Requires a management key holding tenant:update. Not logged, as lists
// are not.
//
// Like every call with a key, it returns Unauthenticated, RateLimited and
// Internal.
func (v *Vault) ListDecoys(ctx context.Context, key Credential) ([]Decoy, error) {
	out := []Decoy{}
	err := v.view(ctx, func(t *txn) error {
		out = out[:0]
		p, err := t.authorizeDecoys(key)
		if err != nil {
			return err
		}
		return t.ScanKeys(tokens.DecoyIndex(p.TenantID), func(_ barrier.Key, id string) error {
			rec, err := v.tokens.Load(t.Tx, p.TenantID, id, false)
			if err != nil || rec == nil || !rec.Decoy {
				return err
			}
			out = append(out, Decoy{ID: rec.ID, ApplicationID: rec.CreatedBy, Freeze: rec.DecoyFreeze, CreatedAt: rec.CreatedAt})
			return nil
		})
	})
	return out, err
}
