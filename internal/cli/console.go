package cli

import (
	"net/http"
	"strings"

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
	// Not a ServeMux: it would redirect /console, and unclean paths such
	// as /console//x, itself, without the console's security headers.
	c := console.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == strings.TrimSuffix(console.Prefix, "/") || strings.HasPrefix(r.URL.Path, console.Prefix) {
			c.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// consolePath is where GET / says the console is: its prefix when on.
func consolePath(on bool) string {
	if on {
		return console.Prefix
	}
	return ""
}
