package httpapi

import (
	"context"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// fpeRoutes serve stateless format-preserving encryption
// (Vault.FPEEncode, Vault.FPEDecode) and the rotation of the tenant's FPE
// keys (Vault.RotateFPEKey).
func (a *api) fpeRoutes() {
	a.handle("POST /fpe/encode", a.fpe(a.v.FPEEncode))
	a.handle("POST /fpe/decode", a.fpe(a.v.FPEDecode))
	a.handle("POST /tenants/self/rotate-fpe-key", a.rotateFPEKey)
}

func (a *api) fpe(run func(ctx context.Context, key tokenvault.Credential, req tokenvault.FPERequest) (*tokenvault.FPEResult, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req tokenvault.FPERequest
		if err := a.decodeJSON(w, r, &req); err != nil {
			a.writeError(w, r, err)
			return
		}
		out, err := run(r.Context(), apiKey(r), req)
		a.reply(w, r, out, err)
	}
}

// fpeKeyRotation is the answer of POST /tenants/self/rotate-fpe-key: the
// new current version.
type fpeKeyRotation struct {
	KeyVersion int `json:"key_version"`
}

func (a *api) rotateFPEKey(w http.ResponseWriter, r *http.Request) {
	version, err := a.v.RotateFPEKey(r.Context(), apiKey(r))
	a.reply(w, r, fpeKeyRotation{KeyVersion: version}, err)
}
