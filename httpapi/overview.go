package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// overviewRoutes serve what a management key reads to see its tenant
// without reading a token: the tenant's figures, and a preview of what an
// application's access rules allow on a sample token.
func (a *api) overviewRoutes() {
	a.handle("GET /tenants/self/statistics", a.tenantStatistics)
	a.handle("POST /applications/preview-access", a.previewAccess)
}

func (a *api) tenantStatistics(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.TenantStatistics(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

func (a *api) previewAccess(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.AccessPreviewRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.PreviewAccess(r.Context(), apiKey(r), req)
	a.reply(w, r, out, err)
}
