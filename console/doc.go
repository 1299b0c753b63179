// Package console serves the Token Vault web console: a few static files
// (HTML, CSS and JavaScript modules, embedded in the binary, no build step,
// no third-party script) that talk only to the public REST API (httpapi)
// with the API key the user signs in with. The console can do nothing that
// key could not do with curl: every page is a view over API calls.
//
// The server (tokenvault serve) mounts Handler at /console/ (Mount) unless
// -console=false; a program that mounts httpapi.New itself serves no
// console unless it mounts Handler too, at /console/ next to the API:
//
//	mux := http.NewServeMux()
//	console.Mount(mux) // /console/ and /console
//	mux.Handle("/", httpapi.New(v, httpapi.Options{}))
//
// The console calls the API at the origin's root (/applications,
// /tokens/search, ...), so the API must be mounted at "/" of the same
// origin.
//
// The key is held in memory and in sessionStorage (so a reload of the tab
// keeps the session), never in localStorage, a cookie or a URL; signing out
// forgets it. Tenant-supplied text (names, metadata, code, error details)
// is always set as text, never parsed as HTML, and the Content-Security-
// Policy (see Handler) forbids inline script and eval, so a planted
// <img onerror=...> can neither be built by the console nor run.
package console
