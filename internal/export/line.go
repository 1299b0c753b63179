package export

import (
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/tokens"
)

// Line is one token of the exchange format: the fields of the API's token
// object read with reveal, snake_case, absent when empty. An import reads
// these fields and keeps the id and created_at.
type Line struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// Data is the token's data as stored: a string or JSON, as its type
	// wants; a card's without its cvc.
	Data                  json.RawMessage   `json:"data"`
	Metadata              map[string]string `json:"metadata,omitempty"`
	SearchIndexes         []string          `json:"search_indexes,omitempty"`
	FingerprintExpression string            `json:"fingerprint_expression,omitempty"`
	// Mask is the mask as given (an expression, or a JSON structure of
	// them), not its value: the receiving vault evaluates it.
	Mask       json.RawMessage `json:"mask,omitempty"`
	Containers []string        `json:"containers,omitempty"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	// Subject is the token's data subject, when tokens carry one.
	Subject string `json:"subject,omitempty"`
}

// LineOf is the exchange line of rec. A card's cvc is left out whatever
// its retention: it never leaves the vault.
func LineOf(rec *tokens.Record) Line {
	data := rec.Data
	if _, has := tokens.CVCWrittenAt(rec); has {
		data = tokens.WithoutCVC(data)
	}
	l := Line{
		ID: rec.ID, Type: rec.Type, Data: data, Metadata: rec.Metadata, SearchIndexes: rec.SearchIndexes,
		FingerprintExpression: rec.FingerprintExpression, Containers: rec.Containers, CreatedAt: rec.CreatedAt.UTC(),
		Subject: rec.Subject,
	}
	if len(rec.MaskExpression) > 0 && string(rec.MaskExpression) != "null" {
		l.Mask = rec.MaskExpression
	}
	if rec.ExpiresAt != nil {
		at := rec.ExpiresAt.UTC()
		l.ExpiresAt = &at
	}
	return l
}
