package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"unicode/utf8"
)

//go:embed static
var files embed.FS

// Prefix is the path Handler expects to be mounted at.
const Prefix = "/console/"

// ContentSecurityPolicy is sent with every file of the console: scripts
// only from the console's own files (no inline script, no eval), styles
// likewise, images from itself or data: URLs, fetches to its own origin
// (the API), no framing (clickjacking), no <base> and forms posting only
// to itself.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Mount registers Handler on mux at /console/ and at /console, so that
// /console is redirected by Handler, with its security headers, rather
// than by the mux, without them.
func Mount(mux *http.ServeMux) {
	h := Handler()
	mux.Handle(Prefix, h)
	mux.Handle(strings.TrimSuffix(Prefix, "/"), h)
}

// servable reports whether rest, a path under Prefix, can name a file:
// a path that is not UTF-8 or holds a NUL names none, and is a 404 (the
// file system refuses it as invalid, which http.FileServer answers 500).
func servable(rest string) bool {
	return utf8.ValidString(rest) && !strings.ContainsRune(rest, 0)
}

// Handler serves the console's files under /console/ (mount it there, on
// the origin whose root serves the API; Mount mounts it). /console is
// redirected to /console/; a path that names no file, such as
// /console/%ff, is a 404. Every answer carries the security headers: the
// Content-Security-Policy above, X-Content-Type-Options: nosniff,
// Referrer-Policy: no-referrer and X-Frame-Options: DENY (for browsers
// without frame-ancestors); index.html is never cached (it names the
// other files), the others are revalidated.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree always holds static
	}
	fileServer := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok || !servable(rest) {
			http.NotFound(w, r)
			return
		}
		if rest == "" || rest == "index.html" || strings.HasSuffix(rest, "/") {
			h.Set("Cache-Control", "no-store")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		if rest == "index.html" {
			// http.FileServer redirects /index.html to ./; serve the
			// directory's index directly instead.
			r2 := r.Clone(r.Context())
			r2.URL.Path = Prefix
			r = r2
		}
		fileServer.ServeHTTP(w, r)
	})
}
