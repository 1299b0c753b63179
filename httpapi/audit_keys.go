package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault/auditchain"
)

// The audit chain's signing keys and checkpoints (docs/audit-chain.md).
// GET /audit/keys is public, as the keys are: a verifier of an audit
// export needs no key of the vault. Rotating the key and signing a
// tenant's head now are operator routes (operatorRoutes).

// auditKeysBody is the answer of GET /audit/keys.
type auditKeysBody struct {
	Keys []auditchain.PublicKey `json:"keys"`
}

func (a *api) auditKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := a.v.AuditKeys(r.Context())
	a.reply(w, r, auditKeysBody{Keys: keys}, err)
}

func (a *api) rotateAuditKey(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.RotateAuditKey(r.Context())
	a.reply(w, r, out, err)
}

func (a *api) signAuditChain(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.SignAuditChain(r.Context(), r.PathValue("id"))
	a.reply(w, r, out, err)
}
