package tokens

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// CVCField is the card data field that is kept only for the retention.
const CVCField = "cvc"

// HasCVC reports whether data, of a token of type typ, holds a cvc.
func HasCVC(typ string, data any) bool {
	m, ok := data.(map[string]any)
	_, has := m[CVCField]
	return ok && has && typ == unit.TypeCard
}

// ExprData is the data a token's expressions (mask, fingerprint, search
// indexes) are evaluated over: a card's without its cvc.
func ExprData(typ string, data any) any {
	if !HasCVC(typ, data) {
		return data
	}
	m := data.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != CVCField {
			out[k] = v
		}
	}
	return out
}

// CVCWrittenAt is when the cvc of rec was written, and whether it holds
// one. Cards stored before cvc retention existed hold a cvc without CVCAt:
// their last write (modified_at, else created_at) stands in.
func CVCWrittenAt(rec *Record) (time.Time, bool) {
	if rec.CVCAt != nil {
		return *rec.CVCAt, true
	}
	if rec.Type != unit.TypeCard || !bytes.Contains(rec.Data, []byte(`"cvc"`)) {
		return time.Time{}, false
	}
	if d, err := jsontext.DecodeLastWins(rec.Data); err != nil || !HasCVC(rec.Type, d) {
		return time.Time{}, false
	}
	if rec.ModifiedAt != nil {
		return *rec.ModifiedAt, true
	}
	return rec.CreatedAt, true
}

// WithoutCVC removes the cvc from stored card data.
func WithoutCVC(raw json.RawMessage) json.RawMessage {
	d, err := jsontext.DecodeLastWins(raw)
	m, ok := d.(map[string]any)
	if err != nil || !ok {
		return raw
	}
	delete(m, CVCField)
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
