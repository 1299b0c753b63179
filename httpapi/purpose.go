package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/tokenvault/tokenvault"
)

// PurposeHeader is the request header naming the call's purpose of access
// (tokenvault.WithPurpose): one of the tenant's purposes. Sent twice, its
// values are joined with a comma, which names no purpose, so the request
// is refused (400, field purpose) rather than one of them picked.
const PurposeHeader = "SVC-PURPOSE"

// withPurpose returns ctx naming r's purpose of access, if it has one.
func withPurpose(ctx context.Context, r *http.Request) context.Context {
	values := r.Header.Values(PurposeHeader)
	if len(values) == 0 {
		return ctx
	}
	purpose := strings.Join(values, ",")
	if purpose == "" {
		purpose = "," // present and empty: no purpose's name, refused
	}
	return tokenvault.WithPurpose(ctx, purpose)
}

func (a *api) setPurposes(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.SetPurposesRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.SetPurposes(r.Context(), apiKey(r), req)
	a.reply(w, r, out, err)
}
