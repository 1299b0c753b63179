package intents

import (
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Token intent lifetimes.
const (
	// DefaultLifetime is how long an intent lives when its request gives
	// no expires_at and the Vault's Options.Retention.TokenIntent is zero.
	DefaultLifetime = 24 * time.Hour
	// MaxLifetime bounds an intent's expires_at, counted from its
	// creation, and the Vault's Options.Retention.TokenIntent.
	MaxLifetime = 48 * time.Hour
)

// Request is the body of a token intent's creation (the root's
// TokenIntentRequest).
type Request struct {
	// Type is token, card or bank; Data is validated as for a token of
	// that type (a card's number, expiration and optional cvc).
	Type string `json:"type"`
	Data any    `json:"data"`
	// ExpiresAt, when set, is when the intent expires: in the future and
	// at most MaxLifetime from now. Nil: after
	// Options.Retention.TokenIntent (one day by default).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Intent is a token intent as returned: never its data (the root's
// TokenIntent).
type Intent struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Type     string `json:"type"`
	// Card summarises a card's data; nil for other types.
	Card *CardDetails `json:"card,omitempty"`
	// Fingerprint is the fingerprint a token of this data gets under its
	// type's default fingerprint expression, shown only to a key that reads
	// tokens of the type in clear in its default container (token:read
	// there with the reveal transform): never to a public key, nor to any
	// key that may not read such tokens or reads them masked or redacted,
	// which could match the fingerprint of a value of its choice against a
	// stored token's.
	Fingerprint string    `json:"fingerprint,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// CardDetails is what a token intent tells of a card: no more than PCI
// DSS allows to be displayed (the BIN and the last four digits).
type CardDetails struct {
	// Bin is the first 6 digits, or 8 for a number of 16 digits or more.
	Bin   string `json:"bin"`
	Last4 string `json:"last4"`
	// ExpirationMonth and ExpirationYear are the card's.
	ExpirationMonth int `json:"expiration_month"`
	ExpirationYear  int `json:"expiration_year"`
	// Brand is the card network by the number's prefix (CardBrand).
	Brand string `json:"brand"`
}

// CheckExpiry checks a request's expires_at at now: in the future and at
// most MaxLifetime from now, the problems added to fe at "expires_at".
func CheckExpiry(at time.Time, now time.Time, fe unit.FieldErrors) {
	unit.CheckExpiry(at, now, "expires_at", fe)
	if at.Sub(now) > MaxLifetime {
		fe.Add("expires_at", "must be at most %s from now", MaxLifetime)
	}
}

// MaySeeFingerprint reports whether p is shown the fingerprint of an
// intent whose type's default container is container ("" for a type
// without one): when it reads tokens of that type in clear there
// (token:read with the reveal transform, as for a token's fingerprint;
// access.Principal.MayReadClearIn). A public application never holds
// token:read, so a public key never is. A key that may not read such
// tokens could otherwise have any value of its choice fingerprinted and
// match it against the fingerprints of stored tokens a reader shows.
func MaySeeFingerprint(p *access.Principal, container string) bool {
	if p.ActorType == unit.ActorApplication && p.AppType == access.Public {
		return false
	}
	return container != "" && p.MayReadClearIn([]string{container})
}

// Of is the intent r as returned: its data summarised, never shown; its
// fingerprint only when fingerprint is true (MaySeeFingerprint).
func Of(r *Record, fingerprint bool) (*Intent, error) {
	out := &Intent{ID: r.ID, TenantID: r.TenantID, Type: r.Type,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if fingerprint {
		out.Fingerprint = r.Fingerprint
	}
	if r.Type == unit.TypeCard {
		var card struct {
			Number string `json:"number"`
			Month  int    `json:"expiration_month"`
			Year   int    `json:"expiration_year"`
		}
		if err := json.Unmarshal(r.Data, &card); err != nil {
			return nil, err
		}
		out.Card = cardDetails(card.Number, card.Month, card.Year)
	}
	return out, nil
}
