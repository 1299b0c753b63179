package cli

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault"
)

// The probes need no key and reveal nothing but "ok" or "unavailable", so
// that an orchestrator can call them without credentials.

// healthz answers 200 while the process serves requests (liveness).
func healthz(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "ok\n")
}

// readyz answers 200 when v is ready (Vault.Ready) within 2 s, else 503
// (readiness): an instance whose database is unreachable, or whose storage
// is full so that writes fail, should get no traffic, but need not be
// restarted: it is ready again once writes commit.
func readyz(v *tokenvault.Vault) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := v.Ready(ctx); err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	}
}
