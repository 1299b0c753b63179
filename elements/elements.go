package elements

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

//go:embed static
var files embed.FS

// Prefix is the path Handler expects to be mounted at: the version is in
// the path so that a merchant page pinned to v1 keeps working when a v2
// changes the messages between the frames.
const Prefix = "/elements/v1/"

// Frame pages, one per kind of field, and the controller frame that
// collects the fields' values and calls the API. Their names are the kind
// a merchant asks for (elements.js: elements.field("card-number")).
var frames = []string{"card-number.html", "card-expiry.html", "card-cvc.html", "text.html", "controller.html"}

// elementsJS is the merchant's script: common.js (what the frames share
// with it) and merchant.js in one closure, so that one script tag
// defines one global, TokenVaultElements, and nothing else.
var elementsJS = func() []byte {
	common, err1 := files.ReadFile("static/common.js")
	merchant, err2 := files.ReadFile("static/merchant.js")
	if err1 != nil || err2 != nil {
		panic("elements: static/common.js or merchant.js is missing")
	}
	return slices.Concat([]byte("// Token Vault elements v1: see docs/elements.md.\n(() => {\n"), common, []byte("\n"), merchant, []byte("})();\n"))
}()

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// scripts may be loaded by any origin (the merchant's page): the plain
// script and its module form.
var scripts = []string{"elements.js", "elements.mjs"}

// FrameCSP is the Content-Security-Policy of a frame allowed to be
// embedded by ancestor, an origin (or 'none'): nothing but the frame's
// own scripts, styles and API calls, no inline script or style, no
// images, fonts, forms, plugins or <base>.
func FrameCSP(ancestor string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors " + ancestor
}

// scriptCSP is sent with the scripts and styles: they are not documents,
// and are never to be rendered as one.
const scriptCSP = "default-src 'none'; frame-ancestors 'none'"

// originLookup looks up the origins allowed to embed the frames of the
// public application whose key is key: a *tokenvault.Vault's
// ElementOrigins.
type originLookup interface {
	ElementOrigins(ctx context.Context, key tokenvault.Credential) ([]string, error)
}

// Handler serves the hosted elements under Prefix (mount it there, on
// the origin whose root serves the API: the controller frame calls the
// API at /tokens and /token-intents of its own origin):
//
//   - elements.js and elements.mjs, the merchant's script, to any origin
//     (Access-Control-Allow-Origin: *, Cross-Origin-Resource-Policy:
//     cross-origin), revalidated on each use (Cache-Control: no-cache);
//   - the frames (card-number.html, card-expiry.html, card-cvc.html,
//     text.html, controller.html), each with its query naming the public
//     key (key) and the embedding page's origin (origin). The frame's
//     Content-Security-Policy (FrameCSP) allows that origin as its only
//     frame-ancestor when it is in the application's allowed_origins, and
//     'none' otherwise: for an unknown, expired or non-public key, an
//     origin not in the list, or a missing parameter, the same page is
//     served, which the browser refuses to show in any frame; the answer
//     says nothing of why. Frames are never stored (Cache-Control:
//     no-store): their header depends on the key's application, which may
//     change;
//   - the frames' scripts and styles, from the frames' own origin.
//
// Every answer carries X-Content-Type-Options: nosniff and
// Referrer-Policy: no-referrer. Only GET and HEAD are served; another
// path is a 404.
func Handler(v *tokenvault.Vault, opts Options) http.Handler {
	return handler(v, opts)
}

// Options adjust Handler.
type Options struct {
	// TrustForwardedFor takes a frame's caller's address from the last
	// X-Forwarded-For entry, as httpapi.Options.TrustForwardedFor does for
	// the API (set both alike): a frame authenticates its public key, and
	// an unknown key counts against the caller's address in the throttle
	// of failed authentications. Behind a proxy without it, every caller
	// has the proxy's address, and one caller's made-up keys would leave
	// every checkout's frames unembeddable.
	TrustForwardedFor bool
}

func handler(v originLookup, opts Options) http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree always holds static
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok || name == "" || strings.Contains(name, "/") || path.Clean(name) != name {
			h.Set("Content-Security-Policy", scriptCSP)
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(sub, name)
		switch name {
		case "elements.js":
			b, err = elementsJS, nil
		case "merchant.js":
			// Only inside elements.js: alone it defines nothing usable.
			err = fs.ErrNotExist
		}
		if err != nil {
			h.Set("Content-Security-Policy", scriptCSP)
			http.NotFound(w, r)
			return
		}
		switch {
		case slices.Contains(frames, name):
			// The key is authenticated as on the API: its rate limits, and
			// the throttle of failed authentications of the address.
			info := &tokenvault.CallInfo{ClientAddress: httpapi.ClientAddress(r, opts.TrustForwardedFor)}
			ctx := tokenvault.WithCallInfo(r.Context(), info)
			h.Set("Content-Security-Policy", FrameCSP(ancestor(ctx, v, r.URL.Query())))
			h.Set("Cache-Control", "no-store")
		case slices.Contains(scripts, name):
			h.Set("Content-Security-Policy", scriptCSP)
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Cross-Origin-Resource-Policy", "cross-origin")
			h.Set("Cache-Control", "no-cache")
		default:
			h.Set("Content-Security-Policy", scriptCSP)
			h.Set("Cache-Control", "no-cache")
		}
		if t, ok := contentTypes[path.Ext(name)]; ok {
			h.Set("Content-Type", t)
		}
		if h.Get("Cache-Control") == "no-cache" {
			// Revalidation costs a 304 when nothing changed.
			h.Set("ETag", etag(b))
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	})
}

// etag is the entity tag of a file's content.
func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// ancestor is the frame-ancestors source of a frame asked for with query
// q: its origin parameter when the application of its key parameter lists
// it in allowed_origins, else 'none'.
func ancestor(ctx context.Context, v originLookup, q url.Values) string {
	const none = "'none'"
	key, origin := q.Get("key"), q.Get("origin")
	if key == "" || origin == "" || len(q["key"]) != 1 || len(q["origin"]) != 1 {
		return none
	}
	allowed, err := v.ElementOrigins(ctx, tokenvault.Credential(key))
	if err != nil || !slices.Contains(allowed, origin) {
		return none
	}
	// allowed_origins are validated (internal/access NormalizeOrigins):
	// an origin holds no space, quote, comma or semicolon.
	return origin
}
