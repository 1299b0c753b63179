package cli

import (
	"net/http"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/elements"
)

// withElements serves the hosted elements (elements.Handler) under
// /elements/v1/ in front of h when on (-elements, the default;
// -elements=false or TOKENVAULT_ELEMENTS=false turns them off). Like the
// console, they are static files with headers of their own, not API
// requests: they are not logged or counted. A frame's answer depends on
// the public key in its URL (the application's allowed_origins); the key
// is authenticated like any other.
func withElements(h http.Handler, v *tokenvault.Vault, on, trustForwardedFor bool) http.Handler {
	if !on {
		return h
	}
	e := elements.Handler(v, elements.Options{TrustForwardedFor: trustForwardedFor})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, elements.Prefix) {
			e.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
