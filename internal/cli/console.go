package cli

import (
	"net/http"

	"github.com/tokenvault/tokenvault/console"
)

// withConsole serves the web console (console.Handler) under /console/ in
// front of h when on (-console, the default; -console=false or
// TOKENVAULT_CONSOLE=false turns it off). The console is static files
// that call the API at the root of the same origin with the key the user
// signs in with, so it needs no key of its own and opens nothing the API
// does not. The console's routes are not logged or counted as API
// requests; /console without the slash is redirected to /console/.
func withConsole(h http.Handler, on bool) http.Handler {
	if !on {
		return h
	}
	mux := http.NewServeMux()
	console.Mount(mux)
	mux.Handle("/", h)
	return mux
}
