package subjects

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TokenKeys is the key store as the tokens feature uses it
// (tokens.SubjectKeys): keys wrapped by the tenant's keyring, subjects
// named by their keyed hash under the tenant's index key.
type TokenKeys struct{ Keys *KeyStore }

var _ tokens.SubjectKeys = TokenKeys{}

func ctxOf(t *unit.Tx) context.Context {
	if t.Ctx != nil {
		return t.Ctx
	}
	return context.Background()
}

// Current is KeyStore.Current for the subject of tenant tid.
func (k TokenKeys) Current(t *unit.Tx, tid, subject string) (string, []byte, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return "", nil, err
	}
	return k.Keys.Current(ctxOf(t), tid, Lookup(ks.MAC, subject), ks.Ring())
}

// Key is KeyStore.Key for tenant tid.
func (k TokenKeys) Key(t *unit.Tx, tid, keyID string) ([]byte, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	return k.Keys.Key(ctxOf(t), tid, keyID, ks.Ring())
}

// TokensOf returns the tokens of tenant tid that name subject, expired
// and erased ones included (Record.Erased), in id order, found by the
// subject index.
func TokensOf(t *unit.Tx, svc *tokens.Service, ks *barrier.Keys, tid, subject string) ([]*tokens.Record, error) {
	ids, err := tokens.IndexedIDs(t, tokens.SubjectIndex(ks, tid, subject))
	if err != nil {
		return nil, err
	}
	var out []*tokens.Record
	for _, id := range ids {
		rec, err := svc.Load(t, tid, id, true)
		if err != nil {
			return nil, err
		}
		if rec != nil && rec.Subject == subject {
			out = append(out, rec)
		}
	}
	return out, nil
}
