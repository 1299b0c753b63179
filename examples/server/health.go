package main

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault"
)

// withHealth serves the probes next to the API:
//
//	GET /healthz  200 while the process serves requests (liveness)
//	GET /readyz   200 when the store answers within 2 s, else 503 (readiness)
//
// Neither needs a key nor reveals anything but "ok" or "unavailable".
func withHealth(v *tokenvault.Vault, api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if _, err := v.HasTenants(ctx); err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.Handle("/", api)
	return mux
}
