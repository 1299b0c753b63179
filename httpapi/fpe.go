package httpapi

import (
	"context"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// fpeRoutes serve stateless format-preserving encryption
// (Vault.FPEEncode, Vault.FPEDecode).
func (a *api) fpeRoutes() {
	a.handle("POST /fpe/encode", a.fpe(a.v.FPEEncode))
	a.handle("POST /fpe/decode", a.fpe(a.v.FPEDecode))
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
