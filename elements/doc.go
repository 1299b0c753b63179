// Package elements serves hosted fields for browsers: card number,
// expiry, security code and a generic text field, each in an iframe of
// the vault's own origin, so that a merchant's page collects card data
// without ever holding it. The page loads one script from the vault
// (elements.js, or elements.mjs as a module), mounts the fields into its
// own elements, styles them through options that can carry no script,
// and asks for a token or a token intent; it receives only what a
// merchant may see: completeness, validation errors, the card's brand
// and last four, and the token's or intent's id. docs/elements.md is the
// merchant's guide.
//
// # Frames and origins
//
// Each field's frame holds its value. A hidden controller frame, of the
// same origin, collects the values when the page asks it to tokenize and
// calls the API (POST /tokens or /token-intents) with the public key in
// the frame's URL, or a session key the page passed it. Messages are
// checked both ways: the page's script accepts messages only from the
// vault's origin and from its own frames; a frame accepts messages only
// from its parent, whose origin it was given and the server checked
// against the application's allowed_origins, and from frames of its own
// origin and instance.
//
// # Headers
//
// The server makes the browser the guarantee: a frame's
// Content-Security-Policy names the embedding origin as its only frame-ancestor when the
// public application lists it in allowed_origins (Vault.ElementOrigins),
// and 'none' otherwise, and allows no inline script or style, no
// connection but to its own origin. See Handler.
//
// # Mounting
//
// The server (tokenvault serve) mounts Handler at /elements/v1/ unless
// -elements=false. A program that mounts httpapi.New itself mounts
// Handler next to it, at the root of the same origin (the controller
// frame calls /tokens of its own origin):
//
//	mux := http.NewServeMux()
//	mux.Handle(elements.Prefix, elements.Handler(v, elements.Options{}))
//	mux.Handle("/", httpapi.New(v, httpapi.Options{}))
package elements
